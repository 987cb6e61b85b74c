// Package actions reads what an agent can operate on a page: the links it
// can follow, the files it can download, the buttons it can press and the
// forms it can fill in, each under a positional id that names the same
// action every time the same page is read.
package actions

import (
	"net/url"
	"strings"

	"golang.org/x/net/html"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/internal/htmlnode"
)

// maxActionText caps, in runes, the text an action is shown with: an agent
// picks an action by what it says, and a link wrapping a whole card says
// too much.
const maxActionText = 200

// Read returns what an agent can operate on doc, the whole page, each
// category in document order with positional ids. page is the document's
// URL, base the one its relative references resolve against; limit, when
// not negative, caps every category, the fields of each form and the
// options of each field.
//
// What no one can see or operate is left out: the inert content of
// templates, and what the markup hides (the hidden attribute,
// aria-hidden, an inline display:none), which is also where honeypot links
// and fields that trap bots live. Hidden inputs are the exception: they
// are meant to be unseen and a form needs them.
func Read(doc *html.Node, page, base *url.URL, limit int) *distillv1.Actions {
	s := newScan(doc)
	a := &distillv1.Actions{}
	a.Links, a.Downloads = s.links(page, base, limit)
	a.Buttons = s.buttons(limit)
	a.Forms = s.forms(page, base, limit)
	return a
}

// Count is the number of entries in a tree, which diagnostics report as
// action_count. It is here, beside the categories, so that a new category
// is counted.
func Count(a *distillv1.Actions) int {
	return len(a.GetLinks()) + len(a.GetDownloads()) + len(a.GetButtons()) + len(a.GetForms())
}

// scan is one page's operable elements and what relates them.
type scan struct {
	// In document order, outside templates and hidden subtrees, except
	// hidden inputs, which controls holds wherever they are.
	anchors, buttonish, formList, controls []*html.Node

	byID     map[string]*html.Node     // the first element with each id
	inForm   map[*html.Node]*html.Node // element -> the form it sits in
	disabled map[*html.Node]bool       // controls a disabled fieldset disables
	label    map[*html.Node]*html.Node // control -> its first label
}

// newScan collects doc's operable elements, having first related the
// forms, disabled fieldsets and labels to the controls they govern.
func newScan(doc *html.Node) *scan {
	s := &scan{
		byID:     map[string]*html.Node{},
		inForm:   map[*html.Node]*html.Node{},
		disabled: map[*html.Node]bool{},
		label:    map[*html.Node]*html.Node{},
	}
	var allForms, fieldsets, labels []*html.Node
	htmlnode.Walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return n.Type == html.DocumentNode
		}
		if n.Data == "template" {
			return false
		}
		if id := htmlnode.Attr(n, "id"); id != "" && s.byID[id] == nil {
			s.byID[id] = n
		}
		switch n.Data {
		case "form":
			allForms = append(allForms, n)
		case "fieldset":
			if htmlnode.HasAttr(n, "disabled") {
				fieldsets = append(fieldsets, n)
			}
		case "label":
			labels = append(labels, n)
		}
		return true
	})
	for _, f := range allForms {
		s.markForm(f)
	}
	for _, fs := range fieldsets {
		s.markDisabled(fs)
	}
	for _, l := range labels {
		s.markLabel(l)
	}

	htmlnode.Walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return n.Type == html.DocumentNode
		}
		if n.Data == "template" {
			return false
		}
		if htmlnode.IsHidden(n) {
			s.hiddenInputs(n)
			return false
		}
		switch n.Data {
		case "a", "area":
			if htmlnode.HasAttr(n, "href") {
				s.anchors = append(s.anchors, n)
				return true
			}
		case "form":
			s.formList = append(s.formList, n)
		case "input", "select", "textarea", "button":
			s.controls = append(s.controls, n)
		}
		if isButton(n) {
			s.buttonish = append(s.buttonish, n)
		}
		return true
	})
	return s
}

// hiddenInputs collects the hidden inputs under a hidden element.
func (s *scan) hiddenInputs(root *html.Node) {
	htmlnode.Walk(root, func(n *html.Node) bool {
		if n.Type != html.ElementNode || n.Data == "template" {
			return false
		}
		if n.Data == "input" && inputType(n) == "hidden" {
			s.controls = append(s.controls, n)
		}
		return true
	})
}

// markForm records f as the form its descendants sit in. The parser never
// nests forms, but a nested one, should a tree hold it, owns its own.
func (s *scan) markForm(f *html.Node) {
	htmlnode.Walk(f, func(n *html.Node) bool {
		if n.Type != html.ElementNode || n.Data == "template" || (n != f && n.Data == "form") {
			return false
		}
		if n != f {
			s.inForm[n] = f
		}
		return true
	})
}

// markDisabled disables the controls under a disabled fieldset, except
// those in its first legend, as browsers do.
func (s *scan) markDisabled(fs *html.Node) {
	if s.disabled[fs] {
		return // an enclosing disabled fieldset has done it
	}
	var legend *html.Node
	for c := fs.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.Data == "legend" {
			legend = c
			break
		}
	}
	htmlnode.Walk(fs, func(n *html.Node) bool {
		if n.Type != html.ElementNode || n == legend || n.Data == "template" {
			return false
		}
		if n != fs {
			s.disabled[n] = true
		}
		return true
	})
}

// markLabel records l as the label of the control it names: the element
// its for attribute points at, or else the first control inside it.
func (s *scan) markLabel(l *html.Node) {
	var target *html.Node
	if htmlnode.HasAttr(l, "for") {
		target = s.byID[htmlnode.Attr(l, "for")]
	} else {
		htmlnode.Walk(l, func(n *html.Node) bool {
			if target == nil && n != l && isLabelable(n) {
				target = n
			}
			return target == nil
		})
	}
	if isLabelable(target) && s.label[target] == nil {
		s.label[target] = l
	}
}

func isLabelable(n *html.Node) bool {
	if n == nil || n.Type != html.ElementNode {
		return false
	}
	switch n.Data {
	case "select", "textarea", "button", "meter", "output", "progress":
		return true
	case "input":
		return inputType(n) != "hidden"
	}
	return false
}

// isButton reports whether n is pressed rather than followed or filled.
// A link with a role of button is still a link: following it is what it
// does.
func isButton(n *html.Node) bool {
	switch n.Data {
	case "button":
		return true
	case "input":
		switch inputType(n) {
		case "button", "submit", "reset", "image":
			return true
		}
		return false
	case "a", "area":
		if htmlnode.HasAttr(n, "href") {
			return false
		}
	case "select", "textarea":
		return false
	}
	return strings.EqualFold(strings.TrimSpace(htmlnode.Attr(n, "role")), "button")
}

// owner returns the form n belongs to, or nil. A form attribute decides
// for the elements that take one, even when it names no form; otherwise
// the enclosing form does.
func (s *scan) owner(n *html.Node) *html.Node {
	switch n.Data {
	case "button", "input", "select", "textarea", "fieldset", "object", "output":
		if htmlnode.HasAttr(n, "form") {
			if f := s.byID[htmlnode.Attr(n, "form")]; f != nil && f.Data == "form" {
				return f
			}
			return nil
		}
	}
	return s.inForm[n]
}

func (s *scan) isDisabled(n *html.Node) bool {
	return htmlnode.HasAttr(n, "disabled") || s.disabled[n] ||
		strings.EqualFold(strings.TrimSpace(htmlnode.Attr(n, "aria-disabled")), "true")
}

// inputTypes are the input types browsers know; any other is text.
var inputTypes = map[string]bool{
	"text": true, "search": true, "tel": true, "url": true, "email": true, "password": true,
	"date": true, "month": true, "week": true, "time": true, "datetime-local": true,
	"number": true, "range": true, "color": true, "checkbox": true, "radio": true,
	"file": true, "hidden": true, "submit": true, "image": true, "reset": true, "button": true,
}

func inputType(n *html.Node) string {
	t := strings.ToLower(strings.TrimSpace(htmlnode.Attr(n, "type")))
	if !inputTypes[t] {
		return "text"
	}
	return t
}

// capList keeps the first limit entries of list; a negative limit keeps
// them all.
func capList[T any](list []T, limit int) []T {
	if limit >= 0 && len(list) > limit {
		return list[:limit]
	}
	return list
}

func ptr(s string) *string { return &s }
