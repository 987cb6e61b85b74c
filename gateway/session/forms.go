package session

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// followTarget returns the URL a link_* or download_* action points to.
func followTarget(a *distillv1.Actions, id string) (string, error) {
	for _, l := range a.GetLinks() {
		if l.GetActionId() == id {
			return l.GetHref(), nil
		}
	}
	for _, d := range a.GetDownloads() {
		if d.GetActionId() == id {
			return d.GetHref(), nil
		}
	}
	switch {
	case id == "":
		return "", failure.New(failure.InvalidArgument, "action_id is required")
	case strings.HasPrefix(id, "form_"):
		return "", failure.New(failure.InvalidArgument, "%s is a form: submit it with session_submit_form", id)
	case strings.HasPrefix(id, "button_"):
		return "", failure.New(failure.InvalidArgument, "%s is a button outside any form: pressing it runs page script, which a session cannot do; follow a link or submit a form instead", id)
	}
	return "", failure.New(failure.InvalidArgument, "no link or download %q on the current page (%s); observe the page again for fresh action ids", id, idRange(a))
}

// idRange describes the follow-able ids of a tree for error messages.
func idRange(a *distillv1.Actions) string {
	var parts []string
	if n := len(a.GetLinks()); n > 0 {
		parts = append(parts, fmt.Sprintf("links link_0..link_%d", n-1))
	}
	if n := len(a.GetDownloads()); n > 0 {
		parts = append(parts, fmt.Sprintf("downloads download_0..download_%d", n-1))
	}
	if len(parts) == 0 {
		return "it has no links"
	}
	return strings.Join(parts, ", ")
}

// submission is a form ready to send.
type submission struct {
	formID  string
	method  string
	target  string // the URL requested: a GET form's query included
	fields  []fieldValue
	encoded string // application/x-www-form-urlencoded
}

type fieldValue struct{ name, value string }

// buildSubmission merges values over the defaults of the form id names
// (form_N or form_N.submit) and encodes it as a browser would.
func buildSubmission(a *distillv1.Actions, id string, values map[string]*distillv1.FieldValues) (*submission, error) {
	if id == "" {
		return nil, failure.New(failure.InvalidArgument, "form_id is required")
	}
	formID := strings.TrimSuffix(id, ".submit")
	var form *distillv1.FormAction
	for _, f := range a.GetForms() {
		if f.GetActionId() == formID {
			form = f
		}
	}
	if form == nil {
		n := len(a.GetForms())
		if n == 0 {
			return nil, failure.New(failure.InvalidArgument, "no form %q: the current page has no forms", id)
		}
		return nil, failure.New(failure.InvalidArgument, "no form %q on the current page (forms form_0..form_%d)", id, n-1)
	}

	known := map[string]*distillv1.FormField{}
	for _, f := range form.GetFields() {
		known[f.GetName()] = f
	}
	for name, v := range values {
		f, ok := known[name]
		if !ok {
			return nil, failure.New(failure.InvalidArgument, "%s has no field %q; its fields are %s", formID, name, strings.Join(fillable(form), ", "))
		}
		if err := checkChoice(f, v.GetValues()); err != nil {
			return nil, failure.New(failure.InvalidArgument, "%s: %v", formID, err)
		}
	}

	sub := &submission{formID: formID, method: strings.ToUpper(form.GetMethod())}
	if sub.method == "" {
		sub.method = http.MethodGet
	}
	for _, f := range form.GetFields() {
		vals := defaults(f)
		if v, ok := values[f.GetName()]; ok {
			vals = v.GetValues()
		}
		if f.GetRequired() && !slices.ContainsFunc(vals, func(s string) bool { return s != "" }) {
			return nil, failure.New(failure.InvalidArgument, "%s: field %q is required; give it in values", formID, f.GetName())
		}
		for _, v := range vals {
			sub.fields = append(sub.fields, fieldValue{f.GetName(), v})
		}
	}
	sub.encoded = encode(sub.fields)

	action, err := url.Parse(form.GetAction())
	if err != nil || (action.Scheme != "http" && action.Scheme != "https") {
		return nil, failure.New(failure.InvalidURL, "%s submits to %q, which is not an http(s) URL", formID, form.GetAction())
	}
	if sub.method == http.MethodGet {
		// A GET form replaces the action's query with its fields.
		action.RawQuery = sub.encoded
		action.Fragment = ""
	}
	sub.target = action.String()
	return sub, nil
}

// defaults are the values a field submits unless the caller gives others:
// what a browser would send pressing Enter.
func defaults(f *distillv1.FormField) []string {
	switch f.GetKind() {
	case "checkbox", "radio":
		return selected(f)
	case "select":
		if s := selected(f); len(s) > 0 {
			return s
		}
		if f.Value != nil {
			return []string{f.GetValue()}
		}
		if opts := f.GetOptions(); len(opts) > 0 {
			// A single select with nothing marked submits its first option.
			return []string{opts[0].GetValue()}
		}
		return nil
	case "file":
		return nil
	default:
		return []string{f.GetValue()}
	}
}

func selected(f *distillv1.FormField) []string {
	var out []string
	for _, o := range f.GetOptions() {
		if o.GetSelected() {
			out = append(out, o.GetValue())
		}
	}
	return out
}

// checkChoice refuses values a select, radio group or checkbox group
// does not offer, and several values for a field that takes one.
func checkChoice(f *distillv1.FormField, vals []string) error {
	switch f.GetKind() {
	case "select", "radio", "checkbox":
	default:
		if len(vals) > 1 {
			return fmt.Errorf("field %q takes one value, got %d", f.GetName(), len(vals))
		}
		return nil
	}
	if len(f.GetOptions()) == 0 {
		return nil
	}
	if f.GetKind() == "radio" && len(vals) > 1 {
		return fmt.Errorf("radio group %q takes one value, got %d", f.GetName(), len(vals))
	}
	var offered []string
	for _, o := range f.GetOptions() {
		offered = append(offered, o.GetValue())
	}
	for _, v := range vals {
		if !slices.Contains(offered, v) {
			return fmt.Errorf("field %q has no choice %q; its choices are %s", f.GetName(), v, strings.Join(offered, ", "))
		}
	}
	return nil
}

// fillable lists the fields a caller is expected to fill: not hidden, not
// the submit button.
func fillable(form *distillv1.FormAction) []string {
	var out []string
	for _, f := range form.GetFields() {
		switch f.GetKind() {
		case "hidden", "submit":
			continue
		}
		out = append(out, f.GetName())
	}
	return out
}

// encode writes fields in form order, as browsers do (url.Values would
// sort them).
func encode(fields []fieldValue) string {
	var b strings.Builder
	for i, f := range fields {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(f.name))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(f.value))
	}
	return b.String()
}

// withhold answers a non-GET form sent without confirm: the session is
// unchanged but for its log, and the answer says what a confirmed submit
// would send.
func (s *Session) withhold(sub *submission) *distillv1.SessionSubmitFormResponse {
	s.appendLog([]*distillv1.Operation{{
		Step: s.steps + 1, Op: "submit_form", Target: sub.formID, Attempt: 0, Outcome: outcomeNeedsConfirmation,
		Detail: proto.String(sub.method + " form needs confirm=true"),
	}})
	fields := make(map[string]*distillv1.FieldValues, len(sub.fields))
	pairs := make([]*distillv1.FieldPair, 0, len(sub.fields))
	for _, f := range sub.fields {
		fv := fields[f.name]
		if fv == nil {
			fv = &distillv1.FieldValues{}
			fields[f.name] = fv
		}
		fv.Values = append(fv.Values, f.value)
		pairs = append(pairs, &distillv1.FieldPair{Name: f.name, Value: f.value})
	}
	return &distillv1.SessionSubmitFormResponse{
		View:              s.view(),
		NeedsConfirmation: true,
		WouldSubmit:       &distillv1.FormSubmission{Method: sub.method, Url: sub.target, Action: sub.target, Fields: fields, FieldPairs: pairs},
	}
}
