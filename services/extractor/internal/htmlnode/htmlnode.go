// Package htmlnode holds the small tree operations the extractor's packages
// share. Every traversal is iterative: hostile pages must not exhaust the
// stack, whatever depth the parser let through.
package htmlnode

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// Walk visits root and its descendants in document order. When fn returns
// false the node's children are skipped. fn must not detach nodes: collect
// them and change the tree after the walk.
func Walk(root *html.Node, fn func(n *html.Node) bool) {
	if root == nil {
		return
	}
	n := root
	for n != nil {
		if fn(n) && n.FirstChild != nil {
			n = n.FirstChild
			continue
		}
		for n != root && n.NextSibling == nil {
			n = n.Parent
		}
		if n == root || n == nil {
			return
		}
		n = n.NextSibling
	}
}

// WalkAround calls enter on each node under root in document order and
// leave once the node's subtree is done; children are skipped when enter
// returns false. It keeps no stack, so no depth of nesting can exhaust one.
func WalkAround(root *html.Node, enter func(*html.Node) bool, leave func(*html.Node)) {
	walkAround(root, enter, func(n *html.Node) bool {
		leave(n)
		return true
	})
}

// walkAround is WalkAround whose leave ends the walk by returning false.
func walkAround(root *html.Node, enter, leave func(*html.Node) bool) {
	n := root
	for {
		if enter(n) && n.FirstChild != nil {
			n = n.FirstChild
			continue
		}
		for {
			if !leave(n) || n == root || n.Parent == nil {
				return
			}
			if n.NextSibling != nil {
				n = n.NextSibling
				break
			}
			n = n.Parent
		}
	}
}

// Elements returns the elements under root (root included) whose tag is one
// of tags, in document order.
func Elements(root *html.Node, tags ...string) []*html.Node {
	var out []*html.Node
	Walk(root, func(n *html.Node) bool {
		if n.Type == html.ElementNode && isOneOf(n.Data, tags) {
			out = append(out, n)
		}
		return true
	})
	return out
}

// First returns the first element under root (root included) with one of
// tags, or nil.
func First(root *html.Node, tags ...string) *html.Node {
	var found *html.Node
	Walk(root, func(n *html.Node) bool {
		if found != nil {
			return false
		}
		if n.Type == html.ElementNode && isOneOf(n.Data, tags) {
			found = n
			return false
		}
		return true
	})
	return found
}

func isOneOf(s string, list []string) bool {
	for _, l := range list {
		if s == l {
			return true
		}
	}
	return false
}

// Attr returns the value of n's attribute key, or "".
func Attr(n *html.Node, key string) string {
	if n == nil {
		return ""
	}
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val
		}
	}
	return ""
}

// HasAttr reports whether n carries the attribute key.
func HasAttr(n *html.Node, key string) bool {
	if n == nil {
		return false
	}
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return true
		}
	}
	return false
}

// SetAttr sets n's attribute key, adding it when missing.
func SetAttr(n *html.Node, key, val string) {
	for i, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			n.Attr[i].Val = val
			return
		}
	}
	n.Attr = append(n.Attr, html.Attribute{Key: key, Val: val})
}

// DelAttr removes n's attribute key.
func DelAttr(n *html.Node, key string) {
	out := n.Attr[:0]
	for _, a := range n.Attr {
		if a.Namespace != "" || a.Key != key {
			out = append(out, a)
		}
	}
	n.Attr = out
}

// CountAttr reads n's attribute key as a count, such as a colspan, a
// rowspan or a select's size: a number in [lo, hi], or 1, the default of
// all three, when it is missing, invalid or below lo. The actions and
// tables packages both read counts this way.
func CountAttr(n *html.Node, key string, lo, hi int) int {
	raw := strings.TrimSpace(Attr(n, key))
	if raw == "" {
		// Most cells have no span: skip the parse error's allocation.
		return 1
	}
	v, err := strconv.Atoi(raw)
	if err != nil || v < lo {
		return 1
	}
	return min(v, hi)
}

// HasToken reports whether the whitespace-separated list, such as a class
// or itemprop value, holds token, compared without case.
func HasToken(list, token string) bool {
	for _, f := range strings.Fields(list) {
		if strings.EqualFold(f, token) {
			return true
		}
	}
	return false
}

// Remove detaches n from its parent, if it has one.
func Remove(n *html.Node) {
	if n != nil && n.Parent != nil {
		n.Parent.RemoveChild(n)
	}
}

// Contains reports whether n is ancestor or itself.
func Contains(ancestor, n *html.Node) bool {
	for ; n != nil; n = n.Parent {
		if n == ancestor {
			return true
		}
	}
	return false
}

// Closest returns the nearest ancestor of n (n excluded) that is an element
// with one of tags, or nil.
func Closest(n *html.Node, tags ...string) *html.Node {
	if n == nil {
		return nil
	}
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type == html.ElementNode && isOneOf(p.Data, tags) {
			return p
		}
	}
	return nil
}

// silent are the elements whose text is never shown as page text.
var silent = map[string]bool{
	"script": true, "style": true, "noscript": true, "template": true,
	"head": true, "title": true, "svg": true, "math": true,
}

// inline elements run on within a line; every other element starts and
// ends a block, which separates the words on either side.
var inline = map[string]bool{
	"a": true, "abbr": true, "b": true, "bdi": true, "bdo": true, "big": true,
	"cite": true, "code": true, "data": true, "del": true, "dfn": true, "em": true,
	"font": true, "i": true, "ins": true, "kbd": true, "label": true, "mark": true,
	"nobr": true, "q": true, "s": true, "samp": true, "small": true, "span": true,
	"strike": true, "strong": true, "sub": true, "sup": true, "time": true,
	"tt": true, "u": true, "var": true, "wbr": true,
}

// Silent reports whether an element's text is never shown as page text
// (scripts, styles, templates, the head, ...).
func Silent(tag string) bool { return silent[tag] }

// Inline reports whether an element runs on within a line rather than
// starting a block.
func Inline(tag string) bool { return inline[tag] }

// Text returns the text under n with whitespace runs collapsed to one space
// and trimmed, skipping scripts, styles and other non-text elements. Block
// boundaries count as whitespace.
func Text(n *html.Node) string {
	var b strings.Builder
	Words(n, nil, func(w string, space bool) bool {
		if space {
			b.WriteByte(' ')
		}
		b.WriteString(w)
		return true
	})
	return b.String()
}

// TextLen returns the number of runes in Text(n), without building it.
func TextLen(n *html.Node) int {
	return TextLenUpTo(n, -1)
}

// TextLenUpTo is TextLen, counted only until it reaches limit (none when
// negative): enough to say whether a text is shorter than limit.
func TextLenUpTo(n *html.Node, limit int) int {
	count := 0
	Words(n, nil, func(w string, space bool) bool {
		if space {
			count++
		}
		count += utf8.RuneCountInString(w)
		return limit < 0 || count < limit
	})
	return count
}

// VisibleText is the text under root as Text returns it, except that it
// passes over the subtrees of the skip tags (a label's select, a cell's
// nested table) and stops after limit runes, reporting the cut, so that
// naming an element that wraps a whole page costs no more than the name.
// A limit of 0 means none. The actions and tables packages both read
// their elements' text this way.
func VisibleText(root *html.Node, limit int, skip ...string) (string, bool) {
	var b strings.Builder
	runes, cut := 0, false
	var skipped func(*html.Node) bool
	if len(skip) > 0 {
		skipped = func(n *html.Node) bool { return slices.Contains(skip, n.Data) }
	}
	// A word is written a rune at a time until the limit is hit, the space
	// before it together with its first rune.
	Words(root, skipped, func(w string, space bool) bool {
		for i, r := range w {
			spaced := space && i == 0
			extra := 1
			if spaced {
				extra = 2
			}
			if limit > 0 && runes+extra > limit {
				cut = true
				return false
			}
			if spaced {
				b.WriteByte(' ')
			}
			b.WriteRune(r)
			runes += extra
		}
		return true
	})
	return b.String(), cut
}

// Words calls emit for each run of non-space text under root, the words of
// Text(root), saying whether a space separates it from the text before. It
// passes over silent elements below root and, when skip is not nil, the
// subtrees of the elements skip picks, whose bounds still separate words
// as a block's do. It stops when emit returns false, and keeps no stack.
func Words(root *html.Node, skip func(*html.Node) bool, emit func(w string, space bool) bool) {
	if root == nil {
		return
	}
	started, space, stopped := false, false, false
	boundary := func(n *html.Node) {
		if !inline[n.Data] {
			space = started
		}
	}
	// silentBelow reports whether n is a silent element other than root.
	silentBelow := func(n *html.Node) bool { return silent[n.Data] && n != root }
	walkAround(root, func(n *html.Node) bool {
		switch n.Type {
		case html.ElementNode:
			if silentBelow(n) {
				return false
			}
			boundary(n)
			return n == root || skip == nil || !skip(n)
		case html.TextNode:
			data := n.Data
			for i := 0; i < len(data); {
				r, size := utf8.DecodeRuneInString(data[i:])
				if unicode.IsSpace(r) {
					space = started
					i += size
					continue
				}
				j := i + size
				for j < len(data) {
					r, size := utf8.DecodeRuneInString(data[j:])
					if unicode.IsSpace(r) {
						break
					}
					j += size
				}
				if !emit(data[i:j], space) {
					stopped = true
					return false
				}
				started, space = true, false
				i = j
			}
			return false
		}
		return true
	}, func(n *html.Node) bool {
		if n.Type == html.ElementNode && !silentBelow(n) {
			boundary(n)
		}
		return !stopped
	})
}

// CollapseSpace collapses whitespace runs of s to one space and trims it.
func CollapseSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// IsHidden reports whether n is hidden by its own markup: the hidden
// attribute, aria-hidden="true", or an inline display:none or
// visibility:hidden.
func IsHidden(n *html.Node) bool {
	if n == nil || n.Type != html.ElementNode {
		return false
	}
	return HasAttr(n, "hidden") || ariaHidden(n) || StyleHidden(n)
}

// ariaHidden reports whether n carries aria-hidden="true".
func ariaHidden(n *html.Node) bool {
	return strings.EqualFold(strings.TrimSpace(Attr(n, "aria-hidden")), "true")
}

// StyleHidden reports whether n's inline style hides it.
func StyleHidden(n *html.Node) bool {
	style := Attr(n, "style")
	if style == "" {
		return false
	}
	style = strings.ToLower(strings.Join(strings.Fields(style), ""))
	return strings.Contains(style, "display:none") || strings.Contains(style, "visibility:hidden")
}

// NewElement returns a detached element.
func NewElement(tag string) *html.Node {
	return &html.Node{Type: html.ElementNode, Data: tag}
}
