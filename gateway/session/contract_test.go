package session

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/pipeline"
)

// These tests hold the session behaviours a RustBrowser 1.x agent relies
// on: what redirect_history lists, how escalations, failures and withheld
// forms are reported, and what an error answer to a sent form shows.

func observe(t *testing.T, m *Manager, id, url string) *distillv1.SessionView {
	t.Helper()
	res, err := m.Observe(context.Background(), &distillv1.SessionObserveRequest{SessionId: id, Url: url})
	if err != nil {
		t.Fatalf("observe %s: %v", url, err)
	}
	return res.GetView()
}

func TestRedirectHistoryListsEveryNavigation(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	// Sessions kept in a key-value bucket, as a cluster's gateways keep
	// them: the history must survive the store.
	kv, err := NewKVStore(embeddedJetStream(t), testKey, 8, time.Minute, 1)
	if err != nil {
		t.Fatal(err)
	}
	m := newManager(t, Config{Store: kv})
	v := start(t, m, s.URL+"/", nil)
	id := v.GetSessionId()
	if got := v.GetRedirectHistory(); len(got) != 1 || got[0] != s.URL+"/" {
		t.Fatalf("after start: redirect_history = %v", got)
	}
	follow(t, m, id, actionID(t, v, "link", "Getting started"))
	// The docs page has no form: the refused step moves nothing.
	if _, err := submit(m, id, "form_0", map[string]string{"q": "x"}, false); err == nil || !strings.Contains(err.Error(), "no form") {
		t.Fatalf("submit on a page without forms: %v", err)
	}
	v = observe(t, m, id, s.URL+"/")
	if _, err := submit(m, id, actionID(t, v, "form", "search form"), map[string]string{"q": "tides"}, false); err != nil {
		t.Fatal(err)
	}
	// A 404 is reported but does not move the session: no entry.
	v = observe(t, m, id, s.URL+"/gone")
	if v.GetLoop().GetFailureReason() != "http_status_404" {
		t.Fatalf("404: loop = %v", v.GetLoop())
	}
	v = observe(t, m, id, s.URL+"/docs/tides")
	want := []string{s.URL + "/", s.URL + "/docs/start", s.URL + "/", s.URL + "/search?q=tides&lang=en", s.URL + "/docs/tides"}
	if got := v.GetRedirectHistory(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("redirect_history = %v\nwant %v", got, want)
	}
	if got := v.GetRedirectHistory(); got[len(got)-1] != v.GetCurrentUrl() {
		t.Fatalf("the last entry %s is not current_url %s", got[len(got)-1], v.GetCurrentUrl())
	}
	st, _, err := kv.Load(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.GetRedirectHistory(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("stored redirect_history = %v\nwant %v", got, want)
	}
}

func TestRedirectHistoryKeepsTheMostRecent(t *testing.T) {
	t.Parallel()
	m := New(quiet, distillFunc(func(_ context.Context, req pipeline.Request) (*pipeline.Result, error) {
		return &pipeline.Result{Distilled: &distillv1.Distilled{Status: http.StatusOK, FinalUrl: req.URL}}, nil
	}), Config{})
	ctx := context.Background()
	res, err := m.Start(ctx, &distillv1.SessionStartRequest{Url: "https://example.com/0"})
	if err != nil {
		t.Fatal(err)
	}
	var v *distillv1.SessionView
	for i := 1; i <= maxHistory+5; i++ {
		obs, err := m.Observe(ctx, &distillv1.SessionObserveRequest{SessionId: res.GetView().GetSessionId(), Url: fmt.Sprintf("https://example.com/%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		v = obs.GetView()
	}
	got := v.GetRedirectHistory()
	if len(got) != maxHistory || got[0] != "https://example.com/6" || got[len(got)-1] != fmt.Sprintf("https://example.com/%d", maxHistory+5) {
		t.Fatalf("after %d navigations: %d entries, %s .. %s", maxHistory+6, len(got), got[0], got[len(got)-1])
	}
}

func TestEscalationIsReportedWhenTheRenderIsNotKept(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	m := newManager(t, Config{})
	v := start(t, m, s.URL+"/shell", func(r *distillv1.SessionStartRequest) { r.Js = distillv1.JsMode_JS_MODE_AUTO })
	st := v.GetLoop().GetState()
	if st.GetFallbackReason() != "js_app" || st.GetUsedHeadless() {
		t.Fatalf("loop state = %v, want fallback_reason js_app and used_headless false", st)
	}
	ops := v.GetOperationLog()
	if len(ops) != 2 {
		t.Fatalf("operation log = %v, want the escalation and the attempt", ops)
	}
	esc, att := ops[0], ops[1]
	if esc.GetOutcome() != "chrome_fallback" || esc.GetFallbackReason() != "js_app" || esc.GetStep() != 1 || esc.GetAttempt() != 1 || !strings.Contains(esc.GetDetail(), "no better") {
		t.Fatalf("escalation entry = %v", esc)
	}
	if att.GetOutcome() != "ok" || att.GetStatus() != 200 {
		t.Fatalf("attempt entry = %v", att)
	}

	// A step that does not escalate clears it.
	v = observe(t, m, v.GetSessionId(), s.URL+"/docs/start")
	if v.GetLoop().GetState().FallbackReason != nil {
		t.Fatalf("after a plain page: loop state = %v", v.GetLoop().GetState())
	}
}

func TestEscalationEntrySaysWhatBecameOfTheRender(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		res        pipeline.Result
		wantDetail string
	}{
		{"kept", pipeline.Result{Escalated: "challenge", FallbackReason: "challenge"}, "rendered headless (challenge); the render was kept"},
		{"not better", pipeline.Result{Escalated: "no_actions"}, "rendered headless (no_actions); the render was no better than the page as fetched, which was kept"},
		{"failed", pipeline.Result{Escalated: "js_app", RenderErr: failure.New(failure.RenderFailed, "no browser")}, "rendered headless (js_app); the render failed, the page as fetched was kept: no browser"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := tt.res
			res.Distilled = &distillv1.Distilled{Status: http.StatusOK, FinalUrl: "https://example.com/"}
			m := New(quiet, distillFunc(func(context.Context, pipeline.Request) (*pipeline.Result, error) { return &res, nil }), Config{})
			out, err := m.Start(context.Background(), &distillv1.SessionStartRequest{Url: "https://example.com/"})
			if err != nil {
				t.Fatal(err)
			}
			v := out.GetView()
			if v.GetLoop().GetState().GetFallbackReason() != tt.res.Escalated {
				t.Errorf("fallback_reason = %q, want %q", v.GetLoop().GetState().GetFallbackReason(), tt.res.Escalated)
			}
			if e := v.GetOperationLog()[0]; e.GetOutcome() != "chrome_fallback" || e.GetDetail() != tt.wantDetail {
				t.Errorf("entry = %v, want detail %q", e, tt.wantDetail)
			}
		})
	}
}

func TestErrorAnswerToAConfirmedFormIsShown(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	m := newManager(t, Config{})
	v := start(t, m, s.URL+"/order", nil)
	id := v.GetSessionId()
	form := actionID(t, v, "form", "POST form")

	res, err := submit(m, id, form, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	v = res.GetView()
	snap := v.GetSnapshot()
	if snap.GetStatus() != http.StatusUnprocessableEntity || snap.GetTitle() != "Order not placed" || !strings.Contains(snap.GetMarkdown(), "Quantity must be at least 1.") {
		t.Fatalf("snapshot after a rejected order: status %d title %q\n%s", snap.GetStatus(), snap.GetTitle(), snap.GetMarkdown())
	}
	l := v.GetLoop()
	if l.GetState().GetStatus() != http.StatusUnprocessableEntity || l.GetFailureReason() != "http_status_422" || l.GetState().GetUrl() != s.URL+"/order" {
		t.Fatalf("loop = %v", l)
	}
	// The session stays on the form's page, and its actions still work.
	if v.GetCurrentUrl() != s.URL+"/order" || strings.Join(v.GetRedirectHistory(), " ") != s.URL+"/order" {
		t.Fatalf("current_url %s, history %v", v.GetCurrentUrl(), v.GetRedirectHistory())
	}
	if actionID(t, v, "form", "POST form") != form || len(snap.GetActions().GetForms()) != 1 || snap.GetDiagnostics().GetActionCount() != int32(len(l.GetAvailableActions())) {
		t.Fatalf("the view's actions are not the order page's: %v", snap.GetActions())
	}
	if sess := loaded(t, m, id); sess.answer.GetTitle() != "Order not placed" || sess.snapshot.GetTitle() != "Order a mooring" {
		t.Fatalf("stored: answer %q snapshot %q", sess.answer.GetTitle(), sess.snapshot.GetTitle())
	}

	res, err = submit(m, id, form, map[string]string{"qty": "2"}, true)
	if err != nil {
		t.Fatal(err)
	}
	v = res.GetView()
	if v.GetSnapshot().GetTitle() != "Order placed" || v.GetCurrentUrl() != s.URL+"/order/done" || v.GetLoop().FailureReason != nil || v.GetLoop().FailureDetail != nil {
		t.Fatalf("after the corrected order: %s %q loop %v", v.GetCurrentUrl(), v.GetSnapshot().GetTitle(), v.GetLoop())
	}
	if sess := loaded(t, m, id); sess.answer != nil {
		t.Fatalf("the error answer outlived the next step: %q", sess.answer.GetTitle())
	}
}

func TestAGetErrorStillShowsThePageTheSessionIsOn(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	m := newManager(t, Config{})
	v := start(t, m, s.URL+"/docs/start", nil)
	v = observe(t, m, v.GetSessionId(), s.URL+"/gone")
	if v.GetSnapshot().GetTitle() != "Getting started" || v.GetLoop().GetFailureReason() != "http_status_404" {
		t.Fatalf("after a 404: %q %v", v.GetSnapshot().GetTitle(), v.GetLoop())
	}
}

func TestWouldSubmitPairsInFormOrder(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	m := newManager(t, Config{})
	v := start(t, m, s.URL+"/order", nil)
	form := actionID(t, v, "form", "POST form")
	pairs := func(ws *distillv1.FormSubmission) string {
		var out []string
		for _, p := range ws.GetFieldPairs() {
			out = append(out, p.GetName()+"="+p.GetValue())
		}
		return strings.Join(out, "&")
	}

	res, err := submit(m, v.GetSessionId(), form, map[string]string{"qty": "3"}, false)
	if err != nil {
		t.Fatal(err)
	}
	ws := res.GetWouldSubmit()
	if ws.GetMethod() != "POST" || ws.GetAction() != s.URL+"/order" {
		t.Fatalf("would_submit = %v", ws)
	}
	if got, want := pairs(ws), "qty=3&extra=water&extra=wifi&token=t1"; got != want {
		t.Fatalf("pairs = %s, want %s", got, want)
	}

	res, err = m.SubmitForm(context.Background(), &distillv1.SessionSubmitFormRequest{SessionId: v.GetSessionId(), FormId: form, Values: map[string]*distillv1.FieldValues{
		"extra": {Values: []string{"power", "wifi"}}, "qty": {Values: []string{"1"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := pairs(res.GetWouldSubmit()), "qty=1&extra=power&extra=wifi&token=t1"; got != want {
		t.Fatalf("pairs = %s, want %s", got, want)
	}
	if n := s.count("/order"); n != 1 {
		t.Fatalf("a withheld form reached the server: %d hits", n)
	}
}
