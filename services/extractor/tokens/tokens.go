// Package tokens counts text in the tokens of OpenAI's o200k_base byte-pair
// encoding, and cuts text to a token budget.
//
// o200k_base is the encoding of GPT-4o, GPT-4.1, GPT-5 and the o-series, the
// models distill's output most often feeds; cl100k_base (GPT-4, GPT-3.5)
// counts English within a few percent of it but other scripts markedly
// higher. No tokenizer counts exactly for every model, so one current
// encoding is the honest single figure.
//
// The vocabulary comes from github.com/tiktoken-go/tokenizer, which compiles
// it into the binary: nothing is downloaded. The splitting and merging are
// done here rather than by that package, for two reasons. Its pattern
// matcher runs at about 3 MB/s and allocates ~80 bytes per input byte, so
// counting an 8 MiB page took seconds; this scanner runs at tens of MB/s
// without allocating. And its generated matcher backtracks `\s*[\r\n]+` to
// the first line break of a whitespace run instead of the last, so it splits
// "\n \n" where tiktoken does not; this scanner follows tiktoken.
//
// The count is exact but for one approximation: a single pre-token longer
// than 4 KiB (only machine-made text has one: a run of one letter, a word
// of random letters) is counted by merging its first 4 KiB and scaling that
// to its length, so that one hostile run costs no more than 4 KiB of work.
package tokens

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer/codec"
)

// Count returns the number of o200k_base tokens in s. Invalid UTF-8 counts
// as U+FFFD, as tiktoken counts bytes decoded with errors="replace".
func Count(s string) int64 {
	s = validUTF8(s)
	enc := o200k()
	var cache *pieceCache
	if len(s) >= cachedFrom {
		cache = new(pieceCache)
	}
	var n int64
	for i := 0; i < len(s); {
		end := nextPiece(s, i)
		if cache != nil {
			n += cache.tokens(enc, s[i:end])
		} else {
			n += int64(enc.pieceTokens(s[i:end]))
		}
		i = end
	}
	return n
}

// cachedFrom is the text length from which Count keeps a pieceCache.
const cachedFrom = 64 << 10

// pieceCache remembers the counts of recent pieces. Pages repeat their
// pieces (" the", "=\"", "</"), and the cache answers them from a few
// kilobytes where the vocabulary, some 10 MB, misses the CPU cache on
// every lookup; on HTML it makes Count half as fast again.
type pieceCache [1024]struct {
	piece  string
	tokens int64
}

func (c *pieceCache) tokens(enc *encoder, piece string) int64 {
	// FNV-1a over the length and the first bytes: cheap, and enough to
	// spread a page's pieces.
	h := uint32(2166136261) ^ uint32(len(piece))
	for i := 0; i < len(piece) && i < 8; i++ {
		h = (h ^ uint32(piece[i])) * 16777619
	}
	e := &c[h%uint32(len(c))]
	if e.piece != piece {
		e.piece, e.tokens = piece, int64(enc.pieceTokens(piece))
	}
	return e.tokens
}

// Prefix returns the length of the longest prefix of s that ends between
// two pre-tokens and has at most max tokens: len(s) exactly when Count(s)
// <= max. It reads s only as far as the budget lasts. Invalid UTF-8 bytes
// are merged as they are rather than as U+FFFD, so on invalid UTF-8 the
// count behind the answer can differ a little from Count's.
func Prefix(s string, max int64) int {
	enc := o200k()
	var n int64
	for i := 0; i < len(s); {
		end := nextPiece(s, i)
		n += int64(enc.pieceTokens(s[i:end]))
		if n > max {
			return i
		}
		i = end
	}
	return len(s)
}

// Truncate returns the longest prefix of s that ends at a word boundary
// and has at most max tokens, with trailing whitespace removed, and reports
// whether it cut. Words end at whitespace and at every rune of scripts
// written without spaces (Han, kana); a first word longer than the budget
// yields "". A max of 0 or less yields "".
func Truncate(s string, max int64) (string, bool) {
	if max <= 0 {
		return "", s != ""
	}
	if Prefix(s, max) == len(s) {
		return s, false
	}
	s = validUTF8(s)
	enc := o200k()

	// cuts are the word boundaries before the budget runs out, ascending.
	var cuts []int
	var total int64
	for i := 0; i < len(s); {
		end := nextPiece(s, i)
		piece := s[i:end]
		if wordBoundary(s, i) {
			cuts = append(cuts, i)
		}
		n := int64(enc.pieceTokens(piece))
		if total+n > max {
			// Unspaced scripts make a whole sentence one piece, so the cut
			// may fall inside it: at the longest rune prefix that fits.
			for _, at := range unspacedCuts(piece) {
				if total+int64(enc.pieceTokens(piece[:at])) > max {
					break
				}
				cuts = append(cuts, i+at)
			}
			break
		}
		total += n
		i = end
	}
	// A prefix's own count can differ from its pieces' sum in the last
	// piece, so the count decides.
	for k := len(cuts) - 1; k >= 0; k-- {
		out := strings.TrimRightFunc(s[:cuts[k]], unicode.IsSpace)
		if Count(out) <= max {
			return out, true
		}
	}
	return "", true
}

// wordBoundary reports whether a cut before s[i] falls between words.
func wordBoundary(s string, i int) bool {
	if i == 0 {
		return false
	}
	before, _ := utf8.DecodeLastRuneInString(s[:i])
	after, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsSpace(before) || unicode.IsSpace(after) || unspaced(before) || unspaced(after)
}

// unspacedCuts returns the offsets inside piece, ascending, where a cut
// falls next to a rune of a script written without spaces.
func unspacedCuts(piece string) []int {
	var at []int
	prev := rune(-1)
	for i, r := range piece {
		if i > 0 && (unspaced(r) || unspaced(prev)) {
			at = append(at, i)
		}
		prev = r
	}
	return at
}

func unspaced(r rune) bool {
	return r >= 0x2E80 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
}

// validUTF8 replaces each maximal invalid subsequence of s with U+FFFD, as
// Python's bytes.decode(errors="replace") does.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
			n = maximalSubpart(s)
		} else {
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

// maximalSubpart returns the length of the invalid sequence s starts with:
// its first byte and the continuation bytes that a valid sequence starting
// with that byte could have had (Unicode 16.0, section 3.9.6).
func maximalSubpart(s string) int {
	need, lo, hi := 0, byte(0x80), byte(0xBF)
	switch c := s[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c == 0xED:
		need, hi = 2, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	i := 1
	for ; i <= need && i < len(s); i++ {
		c := s[i]
		if i == 1 && (c < lo || c > hi) || i > 1 && (c < 0x80 || c > 0xBF) {
			break
		}
	}
	return i
}

// encoder holds the ranks of o200k_base: each token's bytes and its id,
// which is also its merge priority.
type encoder struct {
	ranks map[string]uint32
	parts sync.Pool // *[]part, scratch for merging
}

// o200k builds the encoder once, on first use: reading the vocabulary out
// of the codec takes ~100 ms and ~20 MB that a process counting nothing
// should not pay.
var o200k = sync.OnceValue(buildEncoder)

func buildEncoder() *encoder {
	c := codec.NewO200kBase()
	// Ordinary tokens have the ids below the special ones (199999 and up);
	// ids Decode refuses are unassigned.
	ranks := make(map[string]uint32, 199_998)
	for id := range uint(199_999) {
		tok, err := c.Decode([]uint{id})
		if err != nil || tok == "" {
			continue
		}
		ranks[tok] = uint32(id)
	}
	return &encoder{ranks: ranks}
}
