package tokens

import (
	"unicode"
	"unicode/utf8"
)

// nextPiece returns where the pre-token starting at s[i] ends. It follows
// o200k_base's split pattern as tiktoken's backtracking matcher applies it,
// alternatives in order:
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	\p{N}{1,3}
//	 ?[^\s\p{L}\p{N}]+[\r\n/]*
//	\s*[\r\n]+
//	\s+(?!\S)
//	\s+
//
// i must be < len(s). An invalid UTF-8 byte reads as a one-byte U+FFFD.
func nextPiece(s string, i int) int {
	r, size := decode(s, i)
	c := classOf(r)

	if end := letters(s, i, r, size, c); end > 0 {
		return end
	}
	if c&number != 0 {
		end := i + size
		for range 2 {
			r, n := decode(s, end)
			if n == 0 || classOf(r)&number == 0 {
				break
			}
			end += n
		}
		return end
	}

	j := i
	if r == ' ' {
		j++
	}
	k := j
	for k < len(s) {
		r, n := decode(s, k)
		if classOf(r)&(space|letter|number) != 0 {
			break
		}
		k += n
	}
	if k > j {
		for k < len(s) && (s[k] == '\r' || s[k] == '\n' || s[k] == '/') {
			k++
		}
		return k
	}

	// What is left starts with whitespace.
	end, lastBreak, lastRune := i, -1, i
	for end < len(s) {
		r, n := decode(s, end)
		if classOf(r)&space == 0 {
			break
		}
		if r == '\r' || r == '\n' {
			lastBreak = end
		}
		lastRune = end
		end += n
	}
	switch {
	case lastBreak >= 0:
		return lastBreak + 1
	case end == len(s) || lastRune == i:
		return end
	default:
		// The last space of the run goes with what follows it.
		return lastRune
	}
}

// letters matches the two letter alternatives at s[i], whose first rune is
// r of size bytes and class c, and returns where the match ends, or 0.
func letters(s string, i int, r rune, size int, c class) int {
	// Each alternative first takes the optional prefix rune, then, when
	// the rest fails after it, tries again without it.
	prefixed := c&prefix != 0
	if prefixed {
		if end := upperThenLower(s, i+size); end > 0 {
			return contraction(s, end)
		}
	}
	if end := upperThenLower(s, i); end > 0 {
		return contraction(s, end)
	}
	if prefixed {
		if end := upperRun(s, i+size); end > 0 {
			return contraction(s, end)
		}
	}
	if end := upperRun(s, i); end > 0 {
		return contraction(s, end)
	}
	return 0
}

// upperThenLower matches [U]*[L]+ at s[j] with backtracking (U: upper,
// title, modifier and other letters and marks; L: lower, modifier and
// other letters and marks) and returns where it ends, or 0.
func upperThenLower(s string, j int) int {
	// U* takes its longest run; when no L rune follows, it gives runes back
	// until one it gave back is an L rune, which L+ then takes alone: the
	// runes after it in the run are U-only.
	k, lastLower := j, -1
	for k < len(s) {
		r, n := decode(s, k)
		c := classOf(r)
		if c&upper == 0 {
			break
		}
		if c&lower != 0 {
			lastLower = k + n
		}
		k += n
	}
	r, n := decode(s, k)
	if n > 0 && classOf(r)&lower != 0 {
		return lowerRun(s, k)
	}
	if lastLower > 0 {
		return lastLower
	}
	return 0
}

// upperRun matches [U]+[L]* at s[j] and returns where it ends, or 0.
func upperRun(s string, j int) int {
	k := j
	for k < len(s) {
		r, n := decode(s, k)
		if classOf(r)&upper == 0 {
			break
		}
		k += n
	}
	if k == j {
		return 0
	}
	return lowerRun(s, k)
}

// lowerRun returns where the run of L runes at s[k] ends.
func lowerRun(s string, k int) int {
	for k < len(s) {
		r, n := decode(s, k)
		if classOf(r)&lower == 0 {
			break
		}
		k += n
	}
	return k
}

// contraction extends a letter match ending at s[end] over a following
// 's, 't, 're, 've, 'm, 'll or 'd, in any case.
func contraction(s string, end int) int {
	if end >= len(s) || s[end] != '\'' {
		return end
	}
	r1, n1 := decode(s, end+1)
	r2, n2 := decode(s, end+1+n1)
	switch r1 {
	case 's', 'S', 't', 'T', 'ſ', 'm', 'M', 'd', 'D':
		return end + 1 + n1
	case 'r', 'R', 'v', 'V':
		if r2 == 'e' || r2 == 'E' {
			return end + 1 + n1 + n2
		}
	case 'l', 'L':
		if r2 == 'l' || r2 == 'L' {
			return end + 1 + n1 + n2
		}
	}
	return end
}

// decode returns the rune at s[i] and its size, or 0, 0 at the end.
func decode(s string, i int) (rune, int) {
	if i >= len(s) {
		return 0, 0
	}
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// class is the set of the pattern's character classes a rune belongs to.
type class uint8

const (
	letter class = 1 << iota // \p{L}
	number                   // \p{N}
	space                    // \s
	upper                    // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	lower                    // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
	prefix                   // [^\r\n\p{L}\p{N}]
)

var asciiClass = func() (t [utf8.RuneSelf]class) {
	for r := range rune(utf8.RuneSelf) {
		t[r] = computeClass(r)
	}
	return t
}()

func classOf(r rune) class {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	return computeClass(r)
}

func computeClass(r rune) class {
	var c class
	switch {
	case unicode.IsLetter(r):
		c |= letter
		if unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo) {
			c |= upper
		}
		if unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo) {
			c |= lower
		}
	case unicode.IsNumber(r):
		c |= number
	case unicode.IsMark(r):
		c |= upper | lower
	}
	if unicode.IsSpace(r) {
		c |= space
	}
	if c&(letter|number) == 0 && r != '\r' && r != '\n' {
		c |= prefix
	}
	return c
}
