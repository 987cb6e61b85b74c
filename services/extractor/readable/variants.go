package readable

import (
	"strings"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// DropVariants keeps one of each set of responsive variants that a site
// builder renders side by side. Framer writes a section once per screen
// size, as sibling "ssr-variant" elements each hidden by CSS at the
// widths the others are for ("hidden-xyz" classes, one per width), so a
// page read without its CSS says everything two or three times. Of each
// set, the first is kept: the builder writes its widest first.
func DropVariants(doc *html.Node) {
	var runs [][]*html.Node
	runOf := map[*html.Node]int{}
	htmlnode.Walk(doc, func(n *html.Node) bool {
		if !isResponsiveVariant(n) {
			return true
		}
		if r, ok := runOf[prevElement(n)]; ok {
			runs[r] = append(runs[r], n)
			runOf[n] = r
		} else {
			runOf[n] = len(runs)
			runs = append(runs, []*html.Node{n})
		}
		// Variants nest (a section's variant holds its buttons'): each
		// run is settled on its own, outermost first.
		return true
	})
	for _, run := range runs {
		if run[0].Parent == nil {
			continue // inside a variant already dropped
		}
		for _, set := range variantSets(run) {
			for _, n := range set[1:] {
				htmlnode.Remove(n)
			}
		}
	}
}

// variantSets splits a run of sibling variants into sets, each one screen
// width's worth: a set ends when a variant is shown at a width one before
// it in the set is shown at. A variant is shown at the widths whose
// hidden class it lacks, of those its run names.
func variantSets(run []*html.Node) [][]*html.Node {
	widths := map[string]bool{}
	hidden := make([]map[string]bool, len(run))
	for i, n := range run {
		hidden[i] = map[string]bool{}
		for _, c := range strings.Fields(htmlnode.Attr(n, "class")) {
			if strings.HasPrefix(c, "hidden-") {
				widths[c] = true
				hidden[i][c] = true
			}
		}
	}
	var sets [][]*html.Node
	var shown map[string]bool
	for i, n := range run {
		overlaps := false
		for w := range widths {
			if !hidden[i][w] && shown[w] {
				overlaps = true
				break
			}
		}
		if shown == nil || overlaps {
			sets = append(sets, nil)
			shown = map[string]bool{}
		}
		sets[len(sets)-1] = append(sets[len(sets)-1], n)
		for w := range widths {
			if !hidden[i][w] {
				shown[w] = true
			}
		}
	}
	return sets
}

func isResponsiveVariant(n *html.Node) bool {
	if n.Type != html.ElementNode {
		return false
	}
	// Every element is asked: the substring test spares splitting most.
	class := htmlnode.Attr(n, "class")
	return strings.Contains(class, "ssr-variant") && hasClassWord(class, "ssr-variant")
}

func hasClassWord(class, word string) bool {
	for _, c := range strings.Fields(class) {
		if c == word {
			return true
		}
	}
	return false
}

// prevElement is n's previous sibling element, passing over text and
// comments.
func prevElement(n *html.Node) *html.Node {
	for p := n.PrevSibling; p != nil; p = p.PrevSibling {
		if p.Type == html.ElementNode {
			return p
		}
	}
	return nil
}
