package session

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// maxRecommendations bounds the hints a view carries.
const maxRecommendations = 5

// view is what a step returns.
func (s *Session) view() *distillv1.SessionView {
	snap := capActions(s.shown(), s.set.maxActions)
	return &distillv1.SessionView{
		SessionId:       s.id,
		CurrentUrl:      s.url,
		RedirectHistory: slices.Clone(s.history),
		Snapshot:        snap,
		Loop:            s.loop(snap),
		OperationLog:    slices.Clone(s.log),
	}
}

// shown is the page a view shows: the snapshot, or the HTTP error answer
// to a form the last step sent, carrying the snapshot's action tree. The
// agent reads what the server said (a validation message, say), and the
// action ids it sees are those it can still follow and submit, as the
// session stays on its page.
func (s *Session) shown() *distillv1.Distilled {
	if s.answer == nil || s.snapshot == nil {
		return s.snapshot
	}
	out := proto.CloneOf(s.answer)
	out.Actions = s.snapshot.GetActions()
	if out.Diagnostics != nil {
		out.Diagnostics.ActionCount = s.snapshot.GetDiagnostics().GetActionCount()
	}
	return out
}

// capActions returns d with every action category, each form's fields and
// each field's options cut to limit, as the extractor cuts them, and the
// action count to match. The session keeps the whole tree: a form beyond
// the cap still submits its hidden fields. Without a cap d itself is
// returned, not a copy: its action count is already the extractor's, and
// no caller changes a view.
func capActions(d *distillv1.Distilled, limit int32) *distillv1.Distilled {
	if d == nil || limit <= 0 {
		return d
	}
	out := proto.CloneOf(d)
	a := out.GetActions()
	if a != nil {
		n := int(limit)
		a.Links = a.Links[:min(n, len(a.Links))]
		a.Downloads = a.Downloads[:min(n, len(a.Downloads))]
		a.Buttons = a.Buttons[:min(n, len(a.Buttons))]
		a.Forms = a.Forms[:min(n, len(a.Forms))]
		for _, f := range a.Forms {
			f.Fields = f.Fields[:min(n, len(f.Fields))]
			for _, fl := range f.Fields {
				fl.Options = fl.Options[:min(n, len(fl.Options))]
			}
		}
	}
	if out.Diagnostics != nil {
		out.Diagnostics.ActionCount = int32(len(a.GetLinks()) + len(a.GetDownloads()) + len(a.GetButtons()) + len(a.GetForms()))
	}
	return out
}

func (s *Session) loop(snap *distillv1.Distilled) *distillv1.Loop {
	diag := snap.GetDiagnostics()
	st := &distillv1.LoopState{
		Status:       snap.GetStatus(),
		Title:        snap.GetTitle(),
		ContentChars: diag.GetOutputChars(),
		ActionCount:  diag.GetActionCount(),
		LowContent:   diag.GetLowContent(),
		UsedHeadless: diag.GetUsedHeadless(),
		StepsTaken:   s.steps,
	}
	if s.url != "" {
		st.Url = proto.String(s.url)
	}
	if snap.Excerpt != nil && snap.GetExcerpt() != "" {
		st.Excerpt = proto.String(snap.GetExcerpt())
	}
	if s.fallback != "" {
		st.FallbackReason = proto.String(s.fallback)
	}
	l := &distillv1.Loop{
		State:                  st,
		AvailableActions:       availableActions(snap.GetActions()),
		RecommendedNextActions: s.recommend(snap.GetActions()),
	}
	if s.failure != "" {
		l.FailureReason = proto.String(s.failure)
	}
	if s.failureDetail != "" {
		l.FailureDetail = proto.String(s.failureDetail)
	}
	return l
}

// dangerRe matches labels of buttons that change something on the server
// or cannot be undone; linkDangerRe the fewer links that do, though a link
// is a GET.
var (
	dangerRe     = regexp.MustCompile(`(?i)\b(delete|remove|destroy|erase|pay|payment|buy|purchase|order|checkout|check out|subscribe|unsubscribe|cancel|confirm|transfer|send|publish|post|submit|log ?out|sign ?out|deactivate|close account|reset)\b`)
	linkDangerRe = regexp.MustCompile(`(?i)\b(delete|remove|unsubscribe|log ?out|sign ?out|deactivate|close account)\b`)
)

func availableActions(a *distillv1.Actions) []*distillv1.AvailableAction {
	var out []*distillv1.AvailableAction
	danger := func(re *regexp.Regexp, label string) *bool {
		if re.MatchString(label) {
			return proto.Bool(true)
		}
		return nil
	}
	for _, l := range a.GetLinks() {
		out = append(out, &distillv1.AvailableAction{ActionId: l.GetActionId(), Kind: "link", Label: l.GetText(), Target: proto.String(l.GetHref()), Dangerous: danger(linkDangerRe, l.GetText())})
	}
	for _, f := range a.GetForms() {
		act := &distillv1.AvailableAction{
			ActionId: f.GetActionId(), Kind: "form", Label: formLabel(f),
			Target: proto.String(f.GetAction()), Method: proto.String(f.GetMethod()),
			Fields: fillable(f),
		}
		if f.GetMethod() != "GET" {
			act.Dangerous = proto.Bool(true)
		}
		out = append(out, act)
	}
	for _, b := range a.GetButtons() {
		out = append(out, &distillv1.AvailableAction{ActionId: b.GetActionId(), Kind: "button", Label: b.GetText(), Dangerous: danger(dangerRe, b.GetText())})
	}
	for _, d := range a.GetDownloads() {
		out = append(out, &distillv1.AvailableAction{ActionId: d.GetActionId(), Kind: "download", Label: d.GetText(), Target: proto.String(d.GetHref())})
	}
	return out
}

// formLabel names a form by what it does: its purpose when it is plain
// (search, sign-in), else its method and path, with its fillable fields.
func formLabel(f *distillv1.FormAction) string {
	what := f.GetMethod() + " form"
	switch {
	case isSignIn(f):
		what = "sign-in form"
	case isSearch(f):
		what = "search form"
	}
	path := f.GetAction()
	if u, err := url.Parse(path); err == nil {
		path = u.Path
	}
	label := what + " to " + path
	if fields := fillable(f); len(fields) > 0 {
		label += " (" + strings.Join(fields, ", ") + ")"
	}
	return label
}

func isSignIn(f *distillv1.FormAction) bool {
	return slices.ContainsFunc(f.GetFields(), func(fl *distillv1.FormField) bool { return fl.GetKind() == "password" })
}

var searchNameRe = regexp.MustCompile(`(?i)^(q|query|s|search|keywords?|term|text|k)$`)

func isSearch(f *distillv1.FormAction) bool {
	if f.GetMethod() != "GET" {
		return false
	}
	return slices.ContainsFunc(f.GetFields(), func(fl *distillv1.FormField) bool {
		return fl.GetKind() == "search" || (fl.GetKind() == "text" && searchNameRe.MatchString(fl.GetName()))
	})
}

var nextRe = regexp.MustCompile(`(?i)^\s*(next( page)?|older( posts| entries)?|more|load more|show more|›|»|→|>|>>)\s*[›»→>]?\s*$`)

// recommend suggests a few useful next steps. They are hints for the agent
// to weigh; distill never takes them itself.
func (s *Session) recommend(a *distillv1.Actions) []*distillv1.RecommendedAction {
	var out []*distillv1.RecommendedAction
	add := func(id, kind, why string) {
		if len(out) < maxRecommendations {
			out = append(out, &distillv1.RecommendedAction{ActionId: id, Kind: kind, Why: why})
		}
	}
	for _, f := range a.GetForms() {
		switch {
		case isSearch(f):
			add(f.GetActionId(), "form", fmt.Sprintf("search form: give %s in values and submit it", strings.Join(fillable(f), ", ")))
		case isSignIn(f):
			why := "sign-in form: fill " + strings.Join(fillable(f), ", ")
			if f.GetMethod() != "GET" {
				why += " and submit with confirm=true (it sends a " + f.GetMethod() + ")"
			}
			add(f.GetActionId(), "form", why)
		}
	}
	for _, l := range a.GetLinks() {
		if nextRe.MatchString(l.GetText()) && !s.visited[l.GetHref()] {
			add(l.GetActionId(), "link", "next page of this list")
			break
		}
	}
	// A page on the same site not seen yet, from the content's own
	// navigation: the first such link after the page's chrome is a guess,
	// so offer one only when nothing better was found.
	if len(out) == 0 && s.url != "" {
		cur, _ := url.Parse(s.url)
		for _, l := range a.GetLinks() {
			u, err := url.Parse(l.GetHref())
			if err != nil || cur == nil || u.Host != cur.Host || s.visited[l.GetHref()] || linkDangerRe.MatchString(l.GetText()) {
				continue
			}
			add(l.GetActionId(), "link", "a page of this site not visited yet: "+l.GetText())
			break
		}
	}
	return out
}
