package extract

import (
	"fmt"
	"net/url"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/internal/htmlnode"
	"distill.dev/services/extractor/internal/weburl"
)

// maxActionText caps, in runes, the text an action is shown with: an agent
// picks an action by what it says, and a link wrapping a whole card says
// too much.
const maxActionText = 200

// fileExtensions are the path extensions of links to files rather than to
// pages. Text formats the extractor reads (txt, json, xml) are pages.
var fileExtensions = map[string]bool{
	"pdf": true, "epub": true, "mobi": true, "djvu": true, "ps": true,
	"zip": true, "gz": true, "tgz": true, "tar": true, "bz2": true, "xz": true, "zst": true,
	"7z": true, "rar": true, "jar": true, "whl": true,
	"csv": true, "tsv": true, "xls": true, "xlsx": true, "ods": true,
	"doc": true, "docx": true, "odt": true, "rtf": true,
	"ppt": true, "pptx": true, "odp": true, "key": true,
	"mp3": true, "wav": true, "flac": true, "ogg": true, "m4a": true, "aac": true,
	"mp4": true, "m4v": true, "mov": true, "avi": true, "mkv": true, "webm": true,
	"png": true, "jpg": true, "jpeg": true, "gif": true, "webp": true, "tif": true, "tiff": true,
	"dmg": true, "pkg": true, "exe": true, "msi": true, "deb": true, "rpm": true,
	"apk": true, "ipa": true, "appimage": true, "iso": true, "img": true, "bin": true,
	"torrent": true,
}

// inputTypes are the input types browsers know; any other is text.
var inputTypes = map[string]bool{
	"text": true, "search": true, "tel": true, "url": true, "email": true, "password": true,
	"date": true, "month": true, "week": true, "time": true, "datetime-local": true,
	"number": true, "range": true, "color": true, "checkbox": true, "radio": true,
	"file": true, "hidden": true, "submit": true, "image": true, "reset": true, "button": true,
}

// actionLimit returns options.max_actions, or -1 for no cap. Zero is no
// cap too, as the CLI documents it: a tree capped at nothing would leave
// an agent nothing to act on.
func actionLimit(o *distillv1.FetchOptions) int {
	if n := o.GetMaxActions(); n > 0 {
		return int(n)
	}
	return -1
}

// actionCount is the number of entries in the tree.
func actionCount(a *distillv1.Actions) int {
	return len(a.GetLinks()) + len(a.GetDownloads()) + len(a.GetButtons()) + len(a.GetForms())
}

// actionsIn returns what an agent can operate on the whole page, each
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
func actionsIn(doc *html.Node, page, base *url.URL, limit int) *distillv1.Actions {
	s := scanActions(doc)
	a := &distillv1.Actions{}
	a.Links, a.Downloads = s.links(page, base, limit)
	a.Buttons = s.buttons(limit)
	a.Forms = s.forms(page, base, limit)
	return a
}

// actionScan is one page's operable elements and what relates them.
type actionScan struct {
	// In document order, outside templates and hidden subtrees, except
	// hidden inputs, which controls holds wherever they are.
	anchors, buttonish, formList, controls []*html.Node

	byID     map[string]*html.Node     // the first element with each id
	inForm   map[*html.Node]*html.Node // element -> the form it sits in
	disabled map[*html.Node]bool       // controls a disabled fieldset disables
	label    map[*html.Node]*html.Node // control -> its first label
}

func scanActions(doc *html.Node) *actionScan {
	s := &actionScan{
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
func (s *actionScan) hiddenInputs(root *html.Node) {
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
func (s *actionScan) markForm(f *html.Node) {
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
func (s *actionScan) markDisabled(fs *html.Node) {
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
func (s *actionScan) markLabel(l *html.Node) {
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
func (s *actionScan) owner(n *html.Node) *html.Node {
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

func (s *actionScan) isDisabled(n *html.Node) bool {
	return htmlnode.HasAttr(n, "disabled") || s.disabled[n] ||
		strings.EqualFold(strings.TrimSpace(htmlnode.Attr(n, "aria-disabled")), "true")
}

// links returns the page's links and downloads, one per href, in the order
// their hrefs first appear. Links that stay on the page (fragments, empty
// hrefs) or leave the web (javascript:, mailto:, tel:) are not actions. An
// entry takes the first non-empty text among the links to its href; a
// link that has none anywhere cannot be chosen by what it says and is
// left out, while a download falls back to its file name.
func (s *actionScan) links(page, base *url.URL, limit int) ([]*distillv1.LinkAction, []*distillv1.DownloadAction) {
	links := []*distillv1.LinkAction{}
	downloads := []*distillv1.DownloadAction{}
	linkAt := map[string]int{}
	downloadAt := map[string]int{}
	for _, a := range s.anchors {
		raw := strings.TrimSpace(htmlnode.Attr(a, "href"))
		if raw == "" || strings.HasPrefix(raw, "#") {
			continue
		}
		href, ok := weburl.Resolve(base, raw, "http", "https")
		if !ok || samePage(href, page) {
			continue
		}
		text := s.anchorText(a)
		if name, ok := downloadName(a, href); ok {
			if i, seen := downloadAt[href]; seen {
				if downloads[i].Text == "" {
					downloads[i].Text = text
				}
				continue
			}
			downloadAt[href] = len(downloads)
			d := &distillv1.DownloadAction{Href: href, Text: text}
			if name != "" {
				d.Filename = &name
			}
			downloads = append(downloads, d)
			continue
		}
		if i, seen := linkAt[href]; seen {
			if links[i].Text == "" {
				links[i].Text = text
			}
			continue
		}
		linkAt[href] = len(links)
		links = append(links, &distillv1.LinkAction{Href: href, Text: text})
	}

	named := links[:0]
	for _, l := range links {
		if l.Text != "" {
			named = append(named, l)
		}
	}
	links = capList(named, limit)
	for i, l := range links {
		l.ActionId = fmt.Sprintf("link_%d", i)
	}
	downloads = capList(downloads, limit)
	for i, d := range downloads {
		if d.Text == "" {
			d.Text = d.GetFilename()
		}
		d.ActionId = fmt.Sprintf("download_%d", i)
	}
	return links, downloads
}

// samePage reports whether href only moves within the page: the page's
// own URL with a fragment.
func samePage(href string, page *url.URL) bool {
	u, err := url.Parse(href)
	if err != nil || u.Fragment == "" && u.RawFragment == "" {
		return false
	}
	p := *page
	u.Fragment, u.RawFragment, p.Fragment, p.RawFragment = "", "", "", ""
	return u.String() == p.String()
}

// downloadName reports whether a link leads to a file, and the name the
// file would be saved under: the download attribute's, else the last
// segment of the path. A download attribute makes any link a download;
// otherwise the path's extension decides.
func downloadName(a *html.Node, href string) (string, bool) {
	u, err := url.Parse(href)
	if err != nil {
		return "", false
	}
	last := u.Path[strings.LastIndex(u.Path, "/")+1:]
	if htmlnode.HasAttr(a, "download") {
		// Browsers keep only the last segment of a suggested name.
		name := htmlnode.Attr(a, "download")
		name = strings.TrimSpace(name[strings.LastIndexAny(name, `/\`)+1:])
		if name == "" {
			name = last
		}
		return name, true
	}
	ext := strings.ToLower(strings.TrimPrefix(path.Ext(last), "."))
	if !fileExtensions[ext] {
		return "", false
	}
	return last, true
}

// anchorText names a link by its text, an image's alt (an area's own), or
// its label.
func (s *actionScan) anchorText(a *html.Node) string {
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
func (s *actionScan) accessibleName(n *html.Node, shown string) string {
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
func (s *actionScan) ariaLabel(n *html.Node) string {
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
	return capText(visibleText(n, maxActionText, skip...))
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

// buttons returns the buttons that belong to no form, in document order.
// A form's buttons submit or reset it and are the form's action; the ones
// left act through the page's scripts. Disabled and unnamed buttons are
// left out.
func (s *actionScan) buttons(limit int) []*distillv1.ButtonAction {
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
func (s *actionScan) buttonText(n *html.Node) string {
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

func inputType(n *html.Node) string {
	t := strings.ToLower(strings.TrimSpace(htmlnode.Attr(n, "type")))
	if !inputTypes[t] {
		return "text"
	}
	return t
}

// forms returns the page's forms that submit over http(s), in document
// order. A dialog form closes a dialog and sends nothing, so it is left
// out, as is a form whose action leaves the web.
func (s *actionScan) forms(page, base *url.URL, limit int) []*distillv1.FormAction {
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
func (s *actionScan) target(f, submitter *html.Node, page, base *url.URL) (string, string, bool) {
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
func (s *actionScan) fields(controls []*html.Node, submitter *html.Node, limit int) []*distillv1.FormField {
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
func (s *actionScan) addChoice(f *distillv1.FormField, c *html.Node) {
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
func (s *actionScan) fieldLabel(c *html.Node) *string {
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
	listBox := multiple || span(htmlnode.Attr(sel, "size"), 1, 1<<20) > 1
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

// capList keeps the first limit entries of list; a negative limit keeps
// them all.
func capList[T any](list []T, limit int) []T {
	if limit >= 0 && len(list) > limit {
		return list[:limit]
	}
	return list
}

func ptr(s string) *string { return &s }
