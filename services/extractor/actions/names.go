package actions

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// anchorText names a link by its text, an image's alt (an area's own), or
// its label.
func (s *scan) anchorText(a *html.Node) string {
	text := boundedText(a)
	if text == "" {
		alt := a
		if a.Data == "a" {
			alt = htmlnode.First(a, "img")
		}
		if alt != nil {
			text = capText(htmlnode.CollapseSpace(htmlnode.Attr(alt, "alt")), false)
		}
	}
	return s.accessibleName(a, text)
}

// accessibleName returns what n shows when that has words; otherwise, for
// icon-only elements (a "×", a "☰", an svg), its label from
// aria-labelledby, aria-label or title, falling back to what it shows.
func (s *scan) accessibleName(n *html.Node, shown string) string {
	if hasWords(shown) {
		return shown
	}
	if l := s.ariaLabel(n); l != "" {
		return l
	}
	if t := capText(htmlnode.CollapseSpace(htmlnode.Attr(n, "title")), false); t != "" {
		return t
	}
	return shown
}

// ariaLabel is n's label from aria-labelledby, else aria-label.
func (s *scan) ariaLabel(n *html.Node) string {
	var parts []string
	for _, id := range strings.Fields(htmlnode.Attr(n, "aria-labelledby")) {
		if ref := s.byID[id]; ref != nil {
			if t := boundedText(ref); t != "" {
				parts = append(parts, t)
			}
		}
	}
	if len(parts) > 0 {
		return capText(strings.Join(parts, " "), false)
	}
	return capText(htmlnode.CollapseSpace(htmlnode.Attr(n, "aria-label")), false)
}

func hasWords(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}

// boundedText is n's visible text capped for an action, controls' own
// text (a select's options, a textarea's content) left out.
func boundedText(n *html.Node, skip ...string) string {
	return capText(htmlnode.VisibleText(n, maxActionText, skip...))
}

// capText caps s at maxActionText runes, an ellipsis marking the cut;
// cut says that s was cut short already.
func capText(s string, cut bool) string {
	if !cut && utf8.RuneCountInString(s) <= maxActionText {
		return s
	}
	i := 0
	for n := 0; i < len(s) && n < maxActionText-1; n++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return strings.TrimRight(s[:i], " ") + "…"
}
