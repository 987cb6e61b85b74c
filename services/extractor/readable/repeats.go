package readable

import (
	"strings"
	"unicode"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// repeatWords is the fewest words a block must hold for a second copy of
// it to count as a repeat: short lines ("Reply", "Add to cart", a price)
// recur on every card and post by design.
const repeatWords = 6

// dropsRepeats reports whether pages of type t lose the second copy of a
// block. A thread shows a post again as the preview of the post a reply
// answers; a shop or a list renders its descriptions once per screen size.
// A service page repeats terms under every offer it makes, and a manual
// repeats its commands where they are used, so those keep their copies.
func dropsRepeats(t PageType) bool {
	switch t {
	case TypeForum, TypeProduct, TypeCollection, TypeListing:
		return true
	}
	return false
}

// dropRepeats removes from content the text of every block that repeats,
// word for word, a block of at least repeatWords words before it, and the
// wrappers it leaves empty. That takes a quotation of a post already in
// the content too: its citation line stays and says which post it was.
// Code is left whole: a command or a line of a trace recurs where it is
// used.
func dropRepeats(content *html.Node) {
	seen := map[string]bool{}
	var repeats []*html.Node
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode || c.Data == "pre" || c.Data == "code" {
				continue
			}
			if !inlineTags[c.Data] {
				if key, words := wordsKey(blockText(c)); words >= repeatWords {
					if seen[key] {
						repeats = append(repeats, c)
					} else {
						seen[key] = true
					}
				}
			}
			walk(c)
		}
	}
	walk(content)
	for _, n := range repeats {
		dropOwn(n)
		for n != content && n.Parent != nil && empty(n) {
			parent := n.Parent
			htmlnode.Remove(n)
			n = parent
		}
	}
}

// wordsKey returns text's words, lowercased and joined by single spaces,
// and how many there are: two blocks with the same key say the same thing
// whatever their markup, spacing and punctuation.
func wordsKey(text string) (string, int) {
	var b strings.Builder
	words := 0
	inWord := false
	for _, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if !inWord && words > 0 {
				b.WriteByte(' ')
			}
			if !inWord {
				words++
			}
			inWord = true
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		inWord = false
	}
	return b.String(), words
}
