// Package readable finds the part of a page a reader came for and strips
// what is never content.
//
// Article is the only place that decides what the main content is: it
// picks a container and cleans it. The rest of the extractor takes the node
// it returns, so a stronger scorer can replace this one behind the same
// signature.
package readable

import (
	"context"
	"strings"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// Full returns the page body without scripts, styles, templates, embedded
// objects and hidden elements. It changes doc in place and returns nil when
// doc has no body.
func Full(doc *html.Node) *html.Node {
	body := htmlnode.First(doc, "body")
	if body == nil {
		return nil
	}
	unwrapNoscript(body, measure(body).of(body).text)
	RemoveNonContent(body)
	return body
}

// Article returns the element holding the page's main content, with the
// boilerplate inside it removed. It changes doc in place: the result may be
// an element of doc or a new detached container gathering several of doc's
// elements. It returns nil when doc has no body, and ctx's error when ctx
// ends between two of its passes over the page.
func Article(ctx context.Context, doc *html.Node) (*html.Node, error) {
	return ArticleOf(ctx, doc, Page{Type: TypeArticle})
}

// ArticleOf is Article for a page classified as page: a thread keeps all
// its posts, a list all its cards, a landing page all its sections. The
// blocks the rules keep are then rated by the embedded block model, which
// drops those a reader did not come for.
func ArticleOf(ctx context.Context, doc *html.Node, page Page) (*html.Node, error) {
	return articleOf(ctx, doc, page, DefaultBlockModel(), nil)
}

// ArticleWith is ArticleOf rating blocks with m instead of the embedded
// model; a nil m leaves the rules' choice as it is.
func ArticleWith(m *BlockModel) func(ctx context.Context, doc *html.Node, page Page) (*html.Node, error) {
	return func(ctx context.Context, doc *html.Node, page Page) (*html.Node, error) {
		return articleOf(ctx, doc, page, m, nil)
	}
}

// Sample is one block of a page as the block model sees it, for training:
// its own text, its features, and whether the rules kept it.
type Sample struct {
	Text     string
	Features []uint32
	Kept     bool
	// Protected says the block stays whatever a model rates it.
	Protected bool
}

// Samples runs ArticleOf's rules on doc, without a model, and returns every
// block of the page's body.
func Samples(ctx context.Context, doc *html.Node, page Page) ([]Sample, error) {
	var blocks []textBlock
	content, err := articleOf(ctx, doc, page, nil, &blocks)
	if err != nil {
		return nil, err
	}
	samples := make([]Sample, len(blocks))
	for i, b := range blocks {
		samples[i] = Sample{Text: b.text, Features: b.feats, Kept: content != nil && htmlnode.Contains(content, b.n), Protected: b.kept}
	}
	return samples, nil
}

// articleOf is ArticleOf with model m (nil for the rules alone); a non-nil
// capture receives every block of the body, text included.
func articleOf(ctx context.Context, doc *html.Node, page Page, m *BlockModel, capture *[]textBlock) (*html.Node, error) {
	body := htmlnode.First(doc, "body")
	if body == nil {
		return nil, nil
	}
	st := measure(body)
	if unwrapNoscript(body, st.of(body).text) {
		st = measure(body)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if page.Type == TypeDocumentation && !page.Uncertain {
		// Before hidden elements go: a tab's hidden panels are text too.
		showTabPanels(body)
	}
	removeNonContent(body, st)
	if m != nil && m.threshold(page.Type) <= 0 {
		// The model drops nothing from pages of this type: it is not
		// worth featurizing them.
		m = nil
	}
	var blocks []textBlock
	var plan *widePlan
	if m != nil || capture != nil {
		var keep func(n *html.Node) bool
		if isWide(page.Type) && !page.Uncertain {
			// A wide draw is decided before any block is featurized, and
			// made after: the model rates only the blocks it keeps, as they
			// stand in the whole page. Training rates them all.
			plan = planWide(body, st, page.Type == TypeForum)
			if capture == nil {
				keep = plan.keeps
			}
		}
		blocks = segment(body, st, page, titleWords(doc), capture != nil, keep)
		if capture != nil {
			*capture = blocks
		}
	}
	content, err := choose(ctx, body, st, page, plan)
	if err != nil || content == nil {
		return content, err
	}
	if m != nil || capture != nil {
		in := placeInContent(content, blocks, page)
		if m != nil {
			m.prune(content, blocks, in, m.threshold(page.Type))
		}
	}
	if dropsRepeats(page.Type) {
		dropRepeats(content)
	}
	return content, ctx.Err()
}

// choose is the rules' choice of content in body, its non-content removed.
// plan, when not nil, is the wide draw already decided for the page.
func choose(ctx context.Context, body *html.Node, st treeStats, page Page, plan *widePlan) (*html.Node, error) {
	if page.Type == TypeDocumentation && !page.Uncertain {
		return documentation(ctx, body, st)
	}
	if isWide(page.Type) && !page.Uncertain {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if plan == nil {
			plan = planWide(body, st, page.Type == TypeForum)
		}
		content := plan.draw(st)
		if page.Type == TypeProduct {
			addProductFacts(content, page.Product)
		}
		return content, ctx.Err()
	}
	var content *html.Node
	var sc *scoring
	drawnWide := false
	// Each pass is linear in the page: looking between them bounds how
	// long a cancelled extraction runs on.
	for _, pass := range []func(){
		func() { sc = score(body, st) },
		func() {
			// On a page of no clear type, a best block with little of the
			// page's text is one block of a landing page, not its article.
			if page.Uncertain && thinPick(body, st, sc) {
				content, drawnWide = wide(body, st, false), true
				return
			}
			content = mainContent(body, st, sc)
		},
		func() {
			if !drawnWide {
				clean(content, st, sc)
			}
		},
		func() {
			if !drawnWide {
				trim(content, st)
			}
		},
	} {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pass()
	}
	return content, nil
}

// prune removes from content the text of the blocks in it (in, indexes of
// blocks) that m rates under its threshold, and the blocks left empty by
// that.
func (m *BlockModel) prune(content *html.Node, blocks []textBlock, in []int, threshold float32) {
	for k := len(in) - 1; k >= 0; k-- {
		b := blocks[in[k]]
		if b.kept || m.Prob(b.feats) >= threshold {
			continue
		}
		dropOwn(b.n)
		// The block, and the wrappers it leaves empty, go too.
		for n := b.n; n != content && n.Parent != nil && empty(n); {
			parent := n.Parent
			htmlnode.Remove(n)
			n = parent
		}
	}
}

// dropOwn removes n's own text: its text and inline children, but for the
// blocks an inline child wraps, which are blocks of their own.
func dropOwn(n *html.Node) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		switch {
		case c.Type == html.TextNode:
			htmlnode.Remove(c)
		case c.Type == html.ElementNode && inlineTags[c.Data]:
			if wrapsBlocks(c) {
				dropOwn(c)
			} else {
				htmlnode.Remove(c)
			}
		}
		c = next
	}
}

// wrapsBlocks reports whether inline element n holds a block element.
func wrapsBlocks(n *html.Node) bool {
	found := false
	htmlnode.Walk(n, func(d *html.Node) bool {
		if d != n && d.Type == html.ElementNode && !inlineTags[d.Data] && d.Data != "br" && d.Data != "img" {
			found = true
		}
		return !found
	})
	return found
}

// empty reports whether n holds nothing but white space.
func empty(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.TextNode || strings.TrimSpace(c.Data) != "" {
			return false
		}
	}
	return true
}

// isWide reports whether pages of type t are drawn wide.
func isWide(t PageType) bool {
	switch t {
	case TypeForum, TypeProduct, TypeCollection, TypeListing, TypeService:
		return true
	}
	return false
}

// nonContent are elements whose content is never page text.
var nonContent = map[string]bool{
	"script": true, "style": true, "noscript": true, "template": true,
	"svg": true, "canvas": true, "iframe": true, "object": true, "embed": true,
	"frameset": true, "frame": true, "link": true, "meta": true,
}

// RemoveNonContent removes the scripts, styles, templates, embedded objects,
// comments and hidden elements under root; root itself stays.
func RemoveNonContent(root *html.Node) {
	removeNonContent(root, measure(root))
}

// removeNonContent is RemoveNonContent with root's stats at hand, which it
// keeps current.
func removeNonContent(root *html.Node, st treeStats) {
	rootText := st.of(root).text
	var doomed []*html.Node
	htmlnode.Walk(root, func(n *html.Node) bool {
		switch n.Type {
		case html.CommentNode:
			doomed = append(doomed, n)
			return false
		case html.ElementNode:
		default:
			return true
		}
		if n == root {
			return true
		}
		if nonContent[n.Data] || isHidden(n, st.of(n).text, rootText) {
			doomed = append(doomed, n)
			return false
		}
		return true
	})
	for _, n := range doomed {
		st.detach(n, root)
	}
}

// isHidden reports whether n is hidden. aria-hidden or a style alone does
// not count when n holds most of the page's text: rendered pages often
// mark the whole page aria-hidden while a dialog is open, and pages that
// reveal themselves with scripts once styled wrap everything in a
// visibility:hidden box.
func isHidden(n *html.Node, text, rootText int) bool {
	if !htmlnode.IsHidden(n) {
		return false
	}
	if !htmlnode.HasAttr(n, "hidden") && rootText > 0 && text*2 > rootText {
		return false
	}
	return true
}
