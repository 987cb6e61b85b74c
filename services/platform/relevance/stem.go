package relevance

import "strings"

// Stem strips the common English endings off a lower-case word, the same
// way on a question's side and a document's, so that retries meets retry,
// boxes box, and configure, configured and configuring meet at configur.
// It is light, not a full stemmer: short words (tied, used) keep their
// endings, and so do endings that are part of the word (class, status,
// analysis, agreed).
func Stem(w string) string {
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 5 && strings.HasSuffix(w, "ing"):
		return trimE(w[:n-3])
	case n > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed"):
		return trimE(w[:n-2])
	case n > 4 && (strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "xes") ||
		strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes")):
		return w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return trimE(w[:n-1])
	}
	return trimE(w)
}

// trimE drops a final e, so that configure meets configured at configur.
func trimE(w string) string {
	if len(w) > 3 && strings.HasSuffix(w, "e") {
		return w[:len(w)-1]
	}
	return w
}
