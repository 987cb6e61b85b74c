// Package tokens estimates how many tokens a language model's BPE tokenizer
// makes of a text, and cuts text to a token budget.
//
// The estimate is deterministic and needs no vocabulary, so every service
// and test gets the same figure. It follows how GPT-style tokenizers split
// text, from a scan over runs of one kind of rune:
//
//   - A Latin word of up to 6 letters is one token; each further 4 letters,
//     or part of them, adds one. BPE keeps common words whole and splits long
//     or rare words into pieces of about four characters.
//   - A run of digits is one token per 3 digits, as tokenizers group numbers.
//   - A word in another alphabet (Cyrillic, Greek, Arabic, ...) is one token
//     per 3 letters: vocabularies hold fewer of their merges.
//   - A CJK rune (Han, kana, Hangul) is one token.
//   - A run of ASCII punctuation is one token per 2 characters: pairs such as
//     `="`, `</` and `),` are single tokens in BPE vocabularies.
//   - Any other symbol or non-ASCII punctuation rune is one token.
//   - Spaces join the word after them and cost nothing, but a run of
//     whitespace holding a line break or more than one space is one token.
//
// The rules lean towards counting a little high, so text cut to a budget
// stays within it under a real tokenizer.
package tokens

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Count returns the estimated token count of s.
func Count(s string) int64 {
	var n int64
	scan(s, func(_, _ int, cost int64, _ runKind) bool {
		n += cost
		return true
	})
	return n
}

// Truncate cuts s so that Count of the result is at most max, and reports
// whether it cut. It prefers to cut at a paragraph break, then at a line
// break, then between words, as long as that keeps at least four fifths of
// the budget; only a single word longer than the budget is cut inside.
// Trailing whitespace of the result is removed. A max of 0 or less yields "".
func Truncate(s string, max int64) (string, bool) {
	if max <= 0 {
		return "", s != ""
	}
	if Count(s) <= max {
		return s, false
	}

	// Each cut is the byte offset where a whitespace run starts, with the
	// tokens of everything before it; the best cut of each kind is the
	// latest one within budget.
	type cut struct {
		at     int
		tokens int64
	}
	var para, line, word cut
	var total int64
	scan(s, func(start, end int, cost int64, kind runKind) bool {
		if kind == runSpace && total <= max {
			c := cut{at: start, tokens: total}
			word = c
			if nl := strings.Count(s[start:end], "\n"); nl >= 2 {
				para, line = c, c
			} else if nl == 1 {
				line = c
			}
		}
		total += cost
		return total <= max
	})

	enough := max * 4 / 5
	for _, c := range []cut{para, line, word} {
		if c.at > 0 && c.tokens >= enough {
			return strings.TrimRightFunc(s[:c.at], unicode.IsSpace), true
		}
	}
	if word.at > 0 {
		return strings.TrimRightFunc(s[:word.at], unicode.IsSpace), true
	}
	return strings.TrimRightFunc(hardCut(s, max), unicode.IsSpace), true
}

// hardCut returns the longest prefix of s whose count is within max, cut
// inside a run when the run does not fit whole.
func hardCut(s string, max int64) string {
	end := 0
	var total int64
	scan(s, func(start, stop int, c int64, kind runKind) bool {
		if total+c <= max {
			total += c
			end = stop
			return true
		}
		runes := 0
		for i := start; i < stop; {
			_, size := utf8.DecodeRuneInString(s[i:])
			if total+cost(kind, runes+1, 0) > max {
				break
			}
			runes++
			i += size
			end = i
		}
		return false
	})
	return s[:end]
}

type runKind int

const (
	runSpace runKind = iota
	runLatin
	runDigit
	runOtherLetter
	runPunct
	runSingle // a rune that is a run by itself: CJK, symbols
)

// scan calls fn for each run of s with its byte span, its cost and its kind,
// until fn returns false.
func scan(s string, fn func(start, end int, cost int64, kind runKind) bool) {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		kind := kindOf(r)
		start := i
		i += size
		if kind == runSingle {
			if !fn(start, i, 1, kind) {
				return
			}
			continue
		}
		runes := 1
		newlines := 0
		if r == '\n' {
			newlines++
		}
		for i < len(s) {
			r, size := utf8.DecodeRuneInString(s[i:])
			k := kindOf(r)
			// Combining marks belong to the word they follow.
			if k != kind && !(unicode.Is(unicode.Mn, r) && (kind == runLatin || kind == runOtherLetter)) {
				break
			}
			if r == '\n' {
				newlines++
			}
			runes++
			i += size
		}
		if !fn(start, i, cost(kind, runes, newlines), kind) {
			return
		}
	}
}

func cost(kind runKind, runes, newlines int) int64 {
	switch kind {
	case runSpace:
		if newlines > 0 || runes > 1 {
			return 1
		}
		return 0
	case runLatin:
		if runes <= 6 {
			return 1
		}
		return 1 + ceilDiv(runes-6, 4)
	case runDigit, runOtherLetter:
		return ceilDiv(runes, 3)
	case runPunct:
		return ceilDiv(runes, 2)
	default:
		return int64(runes)
	}
}

func ceilDiv(a, b int) int64 { return int64((a + b - 1) / b) }

func kindOf(r rune) runKind {
	switch {
	case r < utf8.RuneSelf:
		switch {
		case r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v':
			return runSpace
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z':
			return runLatin
		case '0' <= r && r <= '9':
			return runDigit
		case r < ' ' || r == 0x7f:
			return runSpace
		default:
			return runPunct
		}
	case unicode.IsSpace(r):
		return runSpace
	case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
		return runSingle
	case unicode.IsDigit(r):
		return runDigit
	case unicode.Is(unicode.Latin, r):
		return runLatin
	case unicode.IsLetter(r), unicode.Is(unicode.Mn, r):
		return runOtherLetter
	default:
		return runSingle
	}
}
