package readable

import (
	"math"
	"strings"
	"unicode"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// The dense features of a block, the inputs of the trees.
const (
	xWords = iota // log2 of the block's words
	xLinkDensity
	xParentLinkDensity
	xPagePos // share of the page's blocks before this one
	xDepth
	xAlike       // siblings with the block's tag and class
	xParentAlike // siblings of its parent alike
	xDigits      // share of digits among letters and digits
	xCommas
	xEndsSentence
	xPrice
	xHeading // level 1-6, 0 for none
	xTagP
	xTagLi
	xTagCell
	xTagDiv
	xTagPre
	xTagDefinition
	xInNav // from here to xInButton: the block sits inside such an element
	xInHeader
	xInFooter
	xInAside
	xInForm
	xInLi
	xInTable
	xInArticle
	xInMain
	xInSection
	xInQuote
	xInFigure
	xInButton
	xHintUnlikely // from here to xHintContent: distance to the nearest such hint, 9 for none
	xHintFurniture
	xHintComments
	xHintMeta
	xHintContent
	xTitleWords // share of the block's words in the page's title
	xTypeArticle
	xTypeForum
	xTypeProduct
	xTypeCollection
	xTypeListing
	xTypeDocumentation
	xTypeService
	xTypeOther
	xUncertain
	// What the rules' choice tells, set by placeInContent.
	xContentPos  // share of the content's text before the block
	xRegionShare // share of the content's text in the block's region
	xPlace       // -1 before the first running text, 1 after the last, 0 between, 2 when there is none
	xLongDist    // blocks to the nearest running text
	xBeforeH1
	xIsH1
	xContentSize   // log2 of the content's runes
	xContentBlocks // log2 of the content's blocks
	xRegionBlocks  // log2 of the blocks of the block's region
	xKept          // the rules keep the block
	xFeatures
)

var inFeature = map[string]int{
	"nav": xInNav, "menu": xInNav, "header": xInHeader, "footer": xInFooter, "aside": xInAside,
	"form": xInForm, "li": xInLi, "table": xInTable, "article": xInArticle, "main": xInMain,
	"section": xInSection, "blockquote": xInQuote, "figure": xInFigure, "button": xInButton,
	"label": xInButton,
}

var typeFeature = map[PageType]int{
	TypeArticle: xTypeArticle, TypeForum: xTypeForum, TypeProduct: xTypeProduct,
	TypeCollection: xTypeCollection, TypeListing: xTypeListing,
	TypeDocumentation: xTypeDocumentation, TypeService: xTypeService,
}

// dense computes the features of block n that its place in the page
// gives, before the rules edit the tree.
func dense(n *html.Node, st treeStats, page Page, index, total int, title map[string]bool) ([]float32, int) {
	x := make([]float32, xFeatures)
	text, link := ownText(n, st)
	if text > 0 {
		x[xLinkDensity] = float32(link) / float32(text)
	}
	s := blockText(n)
	fields := strings.Fields(s)
	words := len(fields)
	x[xWords] = float32(math.Log2(float64(words) + 1))
	digits, letters := 0, 0
	for _, r := range s {
		switch {
		case unicode.IsDigit(r):
			digits++
		case unicode.IsLetter(r):
			letters++
		}
	}
	if letters+digits > 0 {
		x[xDigits] = float32(digits) / float32(letters+digits)
	}
	x[xCommas] = float32(min(strings.Count(s, ","), 20))
	if t := strings.TrimSpace(s); t != "" {
		switch t[len(t)-1] {
		case '.', '!', '?':
			x[xEndsSentence] = 1
		}
	}
	if hasPrice(s) {
		x[xPrice] = 1
	}
	if len(title) > 0 && words > 0 && words <= 40 {
		hits := 0
		for _, w := range fields {
			if title[normWord(w)] {
				hits++
			}
		}
		x[xTitleWords] = float32(hits) / float32(words)
	}
	x[xPagePos] = float32(index) / float32(max(total, 1))
	switch n.Data {
	case "h1", "h2", "h3", "h4", "h5", "h6":
		x[xHeading] = float32(n.Data[1] - '0')
	case "p":
		x[xTagP] = 1
	case "li":
		x[xTagLi] = 1
	case "td", "th":
		x[xTagCell] = 1
	case "div":
		x[xTagDiv] = 1
	case "pre":
		x[xTagPre] = 1
	case "dt", "dd":
		x[xTagDefinition] = 1
	}
	x[xAlike] = float32(alikeSiblings(n))
	if n.Parent != nil && n.Parent.Type == html.ElementNode {
		x[xParentLinkDensity] = float32(st.of(n.Parent).linkDensity())
		x[xParentAlike] = float32(alikeSiblings(n.Parent))
	}
	for j := xHintUnlikely; j <= xHintContent; j++ {
		x[j] = 9
	}
	depth := 0
	for a := n; a != nil && a.Type == html.ElementNode; a = a.Parent {
		if depth > 0 {
			if j, ok := inFeature[a.Data]; ok {
				x[j] = 1
			}
		}
		if h := st.of(a).hint; h != 0 && depth < 9 {
			for j, bit := range []hint{hintUnlikely, hintFurniture, hintComments, hintMeta, hintContent} {
				if h&bit != 0 && x[xHintUnlikely+j] == 9 {
					x[xHintUnlikely+j] = float32(depth)
				}
			}
		}
		depth++
	}
	x[xDepth] = float32(depth)
	if j, ok := typeFeature[page.Type]; ok {
		x[j] = 1
	} else {
		x[xTypeOther] = 1
	}
	if page.Uncertain {
		x[xUncertain] = 1
	}
	return x, words
}

// normWord is w lower-cased without the punctuation around it.
func normWord(w string) string {
	return strings.ToLower(strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }))
}

// titleWords are the words of the document's title.
func titleWords(doc *html.Node) map[string]bool {
	t := htmlnode.First(doc, "title")
	if t == nil {
		return nil
	}
	words := map[string]bool{}
	for _, w := range strings.Fields(htmlnode.Text(t)) {
		if w = normWord(w); len(w) > 1 {
			words[w] = true
		}
	}
	return words
}
