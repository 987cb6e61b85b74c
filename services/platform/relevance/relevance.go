// Package relevance is the vocabulary distill ranks by: how text splits
// into words, how a word is cut to its stem, which words a question is made
// of rather than about, and how much a word weighs over a set of documents.
// A crawl ranks its frontier and its pages by it, a site map its URLs, and
// the extractor a page's blocks against a question (--query); because all
// three split and stem the same way, "retries" meets "retry" wherever a
// question is asked.
//
// Words and QueryWords are what callers usually need: the normalised words
// of a text, and those of a question less its stop words and repeats.
// Split and Stem are the two halves of Words, for a caller that must tell
// a word as written from its stem. IDF and BM25 weigh the words found.
package relevance

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// linkTarget matches the target of a Markdown link or image, whose URL
// words (https, www, com) say nothing about what the text is about.
var linkTarget = regexp.MustCompile(`\]\([^)\s]*(?:\s+"[^"]*")?\)`)

// Split returns the words of s in order, lower case but not stemmed. A
// word is a run of letters, digits and underscores; an identifier
// (MaxRetries, max_retries) also gives its parts after it; each rune of a
// script written without spaces (Han, Hiragana, Katakana) is a word of its
// own; apostrophes are dropped, and with them a possessive 's. Markdown
// link targets are left out.
func Split(s string) []string {
	s = linkTarget.ReplaceAllString(s, "]")
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) == 0 {
			return
		}
		w := string(cur)
		cur = cur[:0]
		out = append(out, clean(w))
		if parts := identParts(w); len(parts) > 1 {
			for _, p := range parts {
				out = append(out, clean(p))
			}
		}
	}
	for _, r := range s {
		switch {
		case unspaced(r):
			flush()
			out = append(out, string(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_':
			cur = append(cur, r)
		case r == '\'' || r == '’':
			// "language's" is "language": clean drops the possessive.
			cur = append(cur, '\'')
		default:
			flush()
		}
	}
	flush()
	return slices.DeleteFunc(out, func(w string) bool { return w == "" })
}

// Words returns the normalised words of s in order: Split's words, each
// cut to its Stem.
func Words(s string) []string {
	ws := Split(s)
	for i, w := range ws {
		ws[i] = Stem(w)
	}
	return ws
}

// QueryWords are the words of a question that can tell documents apart:
// its Words less stop words, each once, in the question's order. A
// question of stop words alone has none: every document shares "the" with
// it, and none is about it.
func QueryWords(q string) []string {
	var out []string
	for _, w := range Words(q) {
		if !StopWord(w) && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// clean lowercases a word as Split found it and drops its apostrophes,
// with a possessive 's, and the underscores at its ends.
func clean(w string) string {
	w = strings.ToLower(strings.Trim(w, "'_"))
	w = strings.TrimSuffix(w, "'s")
	return strings.ReplaceAll(w, "'", "")
}

// identParts splits an identifier at underscores and at lower-to-upper
// case changes: MaxRetries gives Max and Retries. A word with neither has
// no parts.
func identParts(w string) []string {
	var parts []string
	start := 0
	rs := []rune(w)
	for i := 1; i < len(rs); i++ {
		if rs[i] == '_' || unicode.IsLower(rs[i-1]) && unicode.IsUpper(rs[i]) {
			parts = append(parts, string(rs[start:i]))
			start = i
			if rs[i] == '_' {
				start = i + 1
			}
		}
	}
	if start == 0 {
		return nil
	}
	return append(parts, string(rs[start:]))
}

// unspaced reports whether r belongs to a script written without spaces
// between words.
func unspaced(r rune) bool {
	return r >= 0x2E80 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
}
