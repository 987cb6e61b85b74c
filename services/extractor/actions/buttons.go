package actions

import (
	"fmt"
	"strings"

	"golang.org/x/net/html"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/internal/htmlnode"
)

// buttons returns the buttons that belong to no form, in document order.
// A form's buttons submit or reset it and are the form's action; the ones
// left act through the page's scripts. Disabled and unnamed buttons are
// left out.
func (s *scan) buttons(limit int) []*distillv1.ButtonAction {
	out := []*distillv1.ButtonAction{}
	for _, n := range s.buttonish {
		if limit >= 0 && len(out) >= limit {
			break
		}
		if s.owner(n) != nil || s.isDisabled(n) {
			continue
		}
		text := s.buttonText(n)
		if text == "" {
			continue
		}
		out = append(out, &distillv1.ButtonAction{
			ActionId: fmt.Sprintf("button_%d", len(out)),
			Text:     text,
			Kind:     buttonKind(n),
		})
	}
	return out
}

// buttonKind is submit, reset, button, or role for other elements with
// role=button. A button element's type defaults to submit, but with no
// form to submit one submits nothing, so only an explicit submit is one.
func buttonKind(n *html.Node) string {
	switch n.Data {
	case "input":
		if t := inputType(n); t != "image" {
			return t
		}
		return "submit"
	case "button":
		switch t := strings.ToLower(strings.TrimSpace(htmlnode.Attr(n, "type"))); t {
		case "submit", "reset":
			return t
		}
		return "button"
	}
	return "role"
}

// buttonText is what a button says: an input's value (or the label
// browsers draw for a submit or reset without one, an image's alt), any
// other element's content, or its label.
func (s *scan) buttonText(n *html.Node) string {
	var shown string
	if n.Data == "input" {
		shown = capText(htmlnode.CollapseSpace(htmlnode.Attr(n, "value")), false)
		if shown == "" && !htmlnode.HasAttr(n, "value") {
			switch inputType(n) {
			case "submit":
				shown = "Submit"
			case "reset":
				shown = "Reset"
			case "image":
				shown = capText(htmlnode.CollapseSpace(htmlnode.Attr(n, "alt")), false)
			}
		}
	} else {
		shown = boundedText(n)
	}
	return s.accessibleName(n, shown)
}
