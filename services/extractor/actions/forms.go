package actions

import (
	"fmt"
	"net/url"
	"strings"

	"golang.org/x/net/html"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/internal/htmlnode"
	"distill.dev/services/extractor/internal/weburl"
)

// forms returns the page's forms that submit over http(s), in document
// order. A dialog form closes a dialog and sends nothing, so it is left
// out, as is a form whose action leaves the web.
func (s *scan) forms(page, base *url.URL, limit int) []*distillv1.FormAction {
	owned := map[*html.Node][]*html.Node{}
	for _, c := range s.controls {
		if f := s.owner(c); f != nil {
			owned[f] = append(owned[f], c)
		}
	}
	out := []*distillv1.FormAction{}
	for _, f := range s.formList {
		if limit >= 0 && len(out) >= limit {
			break
		}
		controls := owned[f]
		submitter := defaultButton(controls)
		method, action, ok := s.target(f, submitter, page, base)
		if !ok {
			continue
		}
		id := fmt.Sprintf("form_%d", len(out))
		out = append(out, &distillv1.FormAction{
			ActionId: id,
			Method:   method,
			Action:   action,
			Fields:   s.fields(controls, submitter, limit),
			SubmitId: id + ".submit",
		})
	}
	return out
}

// defaultButton is the form's first submit button, the one that pressing
// Enter in a field presses, or nil.
func defaultButton(controls []*html.Node) *html.Node {
	for _, c := range controls {
		if isSubmit(c) {
			return c
		}
	}
	return nil
}

func isSubmit(n *html.Node) bool {
	switch n.Data {
	case "input":
		t := inputType(n)
		return t == "submit" || t == "image"
	case "button":
		t := strings.ToLower(strings.TrimSpace(htmlnode.Attr(n, "type")))
		return t != "button" && t != "reset"
	}
	return false
}

// target returns the method and absolute URL a submission goes to. The
// default button's formmethod and formaction override the form's, since
// submitting the form presses that button. An empty action is the
// document's own URL, not the base.
func (s *scan) target(f, submitter *html.Node, page, base *url.URL) (string, string, bool) {
	attr := func(formAttr, buttonAttr string) (string, bool) {
		if submitter != nil && !s.isDisabled(submitter) && htmlnode.HasAttr(submitter, buttonAttr) {
			return htmlnode.Attr(submitter, buttonAttr), true
		}
		return htmlnode.Attr(f, formAttr), htmlnode.HasAttr(f, formAttr)
	}
	m, _ := attr("method", "formmethod")
	var method string
	switch strings.ToLower(strings.TrimSpace(m)) {
	case "post":
		method = "POST"
	case "dialog":
		return "", "", false
	default:
		method = "GET"
	}
	raw, _ := attr("action", "formaction")
	if strings.TrimSpace(raw) == "" {
		if scheme := strings.ToLower(page.Scheme); scheme != "http" && scheme != "https" {
			return "", "", false
		}
		u := *page
		u.Fragment, u.RawFragment = "", ""
		return method, u.String(), true
	}
	action, ok := weburl.Resolve(base, raw, "http", "https")
	return method, action, ok
}

// fields returns the form's named, enabled controls as fields, in document
// order. Radios sharing a name are one field with a choice per radio, and
// so are checkboxes sharing a name; a select's choices are its enabled
// options. Buttons are not fields, with one exception: a named default
// button is (kind submit), because a browser that submits the form
// sends its name and value and some servers branch on them. The other
// submit buttons are left out, so that submitting with the defaults is
// what pressing Enter does and never, say, a "Delete" next to "Save".
func (s *scan) fields(controls []*html.Node, submitter *html.Node, limit int) []*distillv1.FormField {
	out := []*distillv1.FormField{}
	groups := map[string]*distillv1.FormField{}
	first := map[*distillv1.FormField]*html.Node{}
	for _, c := range controls {
		name := htmlnode.Attr(c, "name")
		if name == "" || s.isDisabled(c) {
			continue
		}
		if c == submitter && (c.Data == "button" || inputType(c) == "submit") {
			out = append(out, &distillv1.FormField{Name: name, Kind: "submit", Value: ptr(htmlnode.Attr(c, "value"))})
			continue
		}
		if c.Data == "button" {
			continue
		}
		kind := c.Data
		if c.Data == "input" {
			kind = inputType(c)
		}
		switch kind {
		case "submit", "reset", "button", "image":
			continue
		case "radio", "checkbox":
			key := kind + "\x00" + name
			f := groups[key]
			if f == nil {
				f = &distillv1.FormField{Name: name, Kind: kind}
				groups[key] = f
				first[f] = c
				out = append(out, f)
			}
			s.addChoice(f, c)
			continue
		}
		f := &distillv1.FormField{Name: name, Kind: kind, Required: htmlnode.HasAttr(c, "required")}
		switch kind {
		case "hidden":
			f.Required = false
			f.Value = ptr(htmlnode.Attr(c, "value"))
		case "select":
			f.Options, f.Value = selectOptions(c)
		case "textarea":
			f.Value = ptr(rawText(c))
		case "file":
			// No page can choose a file for its visitor.
		default:
			if htmlnode.HasAttr(c, "value") {
				f.Value = ptr(htmlnode.Attr(c, "value"))
			}
		}
		if kind != "hidden" {
			f.Label = s.fieldLabel(c)
		}
		out = append(out, f)
	}
	for f, c := range first {
		labelGroup(f, c)
	}
	out = capList(out, limit)
	for _, f := range out {
		f.Options = capList(f.Options, limit)
	}
	return out
}

// addChoice adds a radio or checkbox to its group's field. A checked
// checkbox's value is submitted; of checked radios the last one parsed
// wins, as in a browser.
func (s *scan) addChoice(f *distillv1.FormField, c *html.Node) {
	value := "on"
	if htmlnode.HasAttr(c, "value") {
		value = htmlnode.Attr(c, "value")
	}
	checked := htmlnode.HasAttr(c, "checked")
	label := ""
	if l := s.fieldLabel(c); l != nil {
		label = *l
	}
	if checked && f.Kind == "radio" {
		for _, o := range f.Options {
			o.Selected = false
		}
		f.Value = ptr(value)
	}
	if checked && f.Kind == "checkbox" && f.Value == nil {
		f.Value = ptr(value)
	}
	f.Required = f.Required || htmlnode.HasAttr(c, "required")
	f.Options = append(f.Options, &distillv1.SelectOption{Value: value, Label: label, Selected: checked})
}

// labelGroup labels a radio or checkbox group whose first control is
// first: a lone control by its own label, a group by the legend of the
// fieldset around it.
func labelGroup(f *distillv1.FormField, first *html.Node) {
	if len(f.Options) == 1 {
		if f.Options[0].Label != "" {
			f.Label = ptr(f.Options[0].Label)
		}
		return
	}
	fs := nearest(first, "fieldset", 8)
	if fs == nil {
		return
	}
	for l := fs.FirstChild; l != nil; l = l.NextSibling {
		if l.Type == html.ElementNode && l.Data == "legend" {
			if t := boundedText(l); t != "" {
				f.Label = &t
			}
			return
		}
	}
}

// nearest returns the closest ancestor of n with tag within depth levels:
// a group's fieldset is near it, and a hostile page's ancestry is long.
func nearest(n *html.Node, tag string, depth int) *html.Node {
	for p := n.Parent; p != nil && depth > 0; p, depth = p.Parent, depth-1 {
		if p.Type == html.ElementNode && p.Data == tag {
			return p
		}
	}
	return nil
}

// fieldLabel is a control's label: its <label> (for= or wrapping), else
// aria-labelledby or aria-label, else its placeholder or title.
func (s *scan) fieldLabel(c *html.Node) *string {
	if l := s.label[c]; l != nil {
		if t := boundedText(l, "select", "textarea", "button", "datalist"); t != "" {
			return &t
		}
	}
	if t := s.ariaLabel(c); t != "" {
		return &t
	}
	for _, attr := range []string{"placeholder", "title"} {
		if t := capText(htmlnode.CollapseSpace(htmlnode.Attr(c, attr)), false); t != "" {
			return &t
		}
	}
	return nil
}

// selectOptions returns a select's enabled options and the value it
// submits. A single select with nothing marked selected selects its first
// option, as browsers draw it, and with several marked the last; a
// multiple select submits every selected option, of which value is the
// first.
func selectOptions(sel *html.Node) ([]*distillv1.SelectOption, *string) {
	var opts []*distillv1.SelectOption
	multiple := htmlnode.HasAttr(sel, "multiple")
	listBox := multiple || htmlnode.CountAttr(sel, "size", 1, 1<<20) > 1
	var last *distillv1.SelectOption
	htmlnode.Walk(sel, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return n.Type == html.DocumentNode
		}
		switch n.Data {
		case "select":
			return n == sel
		case "optgroup":
			return !htmlnode.HasAttr(n, "disabled")
		case "option":
			if htmlnode.HasAttr(n, "disabled") {
				return false
			}
			text := htmlnode.CollapseSpace(rawText(n))
			o := &distillv1.SelectOption{Value: text, Label: text, Selected: htmlnode.HasAttr(n, "selected")}
			if htmlnode.HasAttr(n, "value") {
				o.Value = htmlnode.Attr(n, "value")
			}
			if l := htmlnode.CollapseSpace(htmlnode.Attr(n, "label")); l != "" {
				o.Label = l
			}
			if o.Selected && !multiple {
				if last != nil {
					last.Selected = false
				}
				last = o
			}
			opts = append(opts, o)
			return false
		}
		return true
	})
	if last == nil && !listBox && len(opts) > 0 {
		opts[0].Selected = true
	}
	for _, o := range opts {
		if o.Selected {
			return opts, ptr(o.Value)
		}
	}
	return opts, nil
}

// rawText is the text of n's text children, as a textarea or an option
// holds it.
func rawText(n *html.Node) string {
	var b strings.Builder
	htmlnode.Walk(n, func(c *html.Node) bool {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
		return c == n || c.Type == html.ElementNode && !htmlnode.Silent(c.Data)
	})
	return b.String()
}
