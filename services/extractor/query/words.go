package query

import (
	"regexp"
	"strings"
	"unicode"
)

// linkTarget matches the target of a Markdown link or image, whose URL
// words (https, www, com) say nothing about what the block is about.
var linkTarget = regexp.MustCompile(`\]\([^)\s]*(?:\s+"[^"]*")?\)`)

// words returns the normalised words of s in order: lower case, lightly
// stemmed; identifiers (MaxRetries, max_retries) also give their parts, and
// each rune of a script written without spaces is a word of its own.
func words(s string) []string {
	s = linkTarget.ReplaceAllString(s, "]")
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) == 0 {
			return
		}
		w := string(cur)
		cur = cur[:0]
		parts := identParts(w)
		out = append(out, normalise(w))
		if len(parts) > 1 {
			for _, p := range parts {
				out = append(out, normalise(p))
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
			// "language's" is "language": the possessive is dropped below.
			cur = append(cur, '\'')
		default:
			flush()
		}
	}
	flush()
	kept := out[:0]
	for _, w := range out {
		if w != "" {
			kept = append(kept, w)
		}
	}
	return kept
}

// identParts splits an identifier at underscores and at lower-to-upper
// case changes: MaxRetries gives Max and Retries.
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
	parts = append(parts, string(rs[start:]))
	return parts
}

// normalise lowercases w and strips common English endings, the same way
// on the question's side and the page's, so retries meets retry and
// configuring meets configure(d).
func normalise(w string) string {
	w = strings.ToLower(strings.Trim(w, "'_"))
	w = strings.TrimSuffix(w, "'s")
	w = strings.ReplaceAll(w, "'", "")
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 5 && strings.HasSuffix(w, "ing"):
		return trimE(w[:n-3])
	case n > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed"):
		return trimE(w[:n-2])
	case n > 4 && (strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes")):
		return w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return trimE(w[:n-1])
	}
	return trimE(w)
}

// trimE drops a final e, so that configure, configured and configuring
// meet at configur.
func trimE(w string) string {
	if len(w) > 3 && strings.HasSuffix(w, "e") {
		return w[:len(w)-1]
	}
	return w
}

func unspaced(r rune) bool {
	return r >= 0x2E80 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
}

// stopWords are the words a question is made of rather than about. They
// are dropped from questions before anything is scored.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be because
		been before being below between both but by can could did do does doing down during each few for from
		further had has have having he her here hers herself him himself his how i if in into is it its itself
		just me more most my myself no nor not now of off on once only or other our ours ourselves out over own
		same she should so some such than that the their theirs them themselves then there these they this those
		through to too under until up very was we were what when where which while who whom why will with would
		you your yours yourself yourselves tell show explain describe give find list please much many get got
		does did use using used way ways thing things`) {
		m[normalise(w)] = true
	}
	return m
}()
