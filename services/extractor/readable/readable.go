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
// its posts, a list all its cards, a landing page all its sections.
func ArticleOf(ctx context.Context, doc *html.Node, page Page) (*html.Node, error) {
	body := htmlnode.First(doc, "body")
	if body == nil {
		return nil, nil
	}
	st := measure(body)
	if unwrapNoscript(body, st.of(body).text) {
		st = measure(body)
	}
	if page.Type == TypeDocumentation && !page.Uncertain {
		return documentation(ctx, body, st)
	}
	if isWide(page.Type) && !page.Uncertain {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		removeNonContent(body, st)
		content := wide(body, st, page.Type == TypeForum)
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
		func() { removeNonContent(body, st) },
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
