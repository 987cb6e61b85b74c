package tokens

import (
	"sync"
	"testing"
	"unicode"

	"github.com/dlclark/regexp2/v2"
	"github.com/tiktoken-go/tokenizer/codec"
)

// o200kPattern is tiktoken's split pattern for o200k_base.
const o200kPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// referenceSplitter runs the pattern through regexp2's interpreter, a
// backtracking matcher with tiktoken's semantics. The alternative that can
// never match keeps regexp2 from swapping in the code generated for the
// tokenizer package, which differs on "\n \n".
var referenceSplitter = sync.OnceValue(func() *regexp2.Regexp {
	return regexp2.MustCompile(o200kPattern+`|(?!)`, regexp2.None)
})

func referencePieces(t testing.TB, s string) []string {
	t.Helper()
	var pieces []string
	m, err := referenceSplitter().FindStringMatch(s)
	for ; m != nil && err == nil; m, err = referenceSplitter().FindNextMatch(m) {
		pieces = append(pieces, m.String())
	}
	if err != nil {
		t.Fatalf("reference split %q: %v", s, err)
	}
	return pieces
}

func ourPieces(s string) []string {
	var pieces []string
	for i := 0; i < len(s); {
		end := nextPiece(s, i)
		pieces = append(pieces, s[i:end])
		i = end
	}
	return pieces
}

var referenceCodec = sync.OnceValue(func() *codec.Codec {
	c := codec.NewO200kBase()
	c.SetErrorMode(codec.ErrorModeReplace)
	return c
})

// referenceCount is the tokenizer package's count, which agrees with
// tiktoken except where its matcher splits a whitespace run holding line
// breaks apart at the first break; comparable reports whether s has none.
func referenceCount(t testing.TB, s string) int64 {
	t.Helper()
	n, err := referenceCodec().Count(s)
	if err != nil {
		t.Fatalf("reference count %q: %v", s, err)
	}
	return int64(n)
}

func comparable(s string) bool {
	// Within one whitespace run, a line break after other whitespace that
	// follows a line break is where the two matchers part.
	afterBreak, gap := false, false
	for _, r := range s {
		switch {
		case r == '\r' || r == '\n':
			if gap {
				return false
			}
			afterBreak = true
		case unicode.IsSpace(r):
			gap = afterBreak
		default:
			afterBreak, gap = false, false
		}
	}
	return true
}
