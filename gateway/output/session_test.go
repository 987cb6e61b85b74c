package output

import (
	"encoding/json"
	"testing"

	"google.golang.org/protobuf/proto"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// sessionView has every part of a session view set: a form's error
// answer, after a step that escalated to the renderer without keeping the
// render.
func sessionView() *distillv1.SessionView {
	return &distillv1.SessionView{
		SessionId:       "s_0123",
		CurrentUrl:      "https://example.com/order",
		RedirectHistory: []string{"https://example.com/", "https://example.com/order"},
		Snapshot: &distillv1.Distilled{
			FinalUrl: "https://example.com/order", Status: 422, Title: "Order not placed", Markdown: "Quantity must be at least 1.",
			Actions: &distillv1.Actions{Forms: []*distillv1.FormAction{{
				ActionId: "form_0", Method: "POST", Action: "https://example.com/order", SubmitId: "form_0.submit",
				Fields: []*distillv1.FormField{{Name: "qty", Kind: "text", Value: str("0")}},
			}}},
		},
		Loop: &distillv1.Loop{
			State: &distillv1.LoopState{
				Url: str("https://example.com/order"), Status: 422, Title: "Order not placed", ContentChars: 28, ActionCount: 1,
				StepsTaken: 3,
			},
			AvailableActions: []*distillv1.AvailableAction{{
				ActionId: "form_0", Kind: "form", Label: "POST form to /order (qty)", Target: str("https://example.com/order"),
				Method: str("POST"), Dangerous: proto.Bool(true), Fields: []string{"qty"},
			}},
			RecommendedNextActions: []*distillv1.RecommendedAction{},
			FailureReason:          str("http_status_422"),
			FailureDetail:          str("HTTP 422 Unprocessable Entity at https://example.com/order"),
		},
		OperationLog: []*distillv1.Operation{
			{Step: 2, Op: "observe", Target: "https://example.com/order", Attempt: 1, Outcome: "chrome_fallback", FallbackReason: str("js_app"),
				Detail: str("rendered headless (js_app); the render was no better than the page as fetched, which was kept")},
			{Step: 2, Op: "observe", Target: "https://example.com/order", Status: proto.Int32(200), Attempt: 1, Outcome: "ok"},
			{Step: 3, Op: "submit_form", Target: "form_0", Status: proto.Int32(422), Attempt: 1, Outcome: "verify_failed",
				FailureReason: str("http_status_422"), Detail: str("HTTP 422 Unprocessable Entity at https://example.com/order")},
		},
	}
}

func withheld() *distillv1.SessionSubmitFormResponse {
	return &distillv1.SessionSubmitFormResponse{
		View:              sessionView(),
		NeedsConfirmation: true,
		WouldSubmit: &distillv1.FormSubmission{
			Method: "POST", Url: "https://example.com/order", Action: "https://example.com/order",
			Fields: map[string]*distillv1.FieldValues{"qty": {Values: []string{"2"}}, "extra": {Values: []string{"water", "wifi"}}, "token": {Values: []string{"t1"}}},
			FieldPairs: []*distillv1.FieldPair{
				{Name: "qty", Value: "2"}, {Name: "extra", Value: "water"}, {Name: "extra", Value: "wifi"}, {Name: "token", Value: "t1"},
			},
		},
	}
}

func TestSessionJSONGolden(t *testing.T) {
	view, err := MarshalSessionView(sessionView())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "session-view.json", append(view, '\n'))
	submit, err := MarshalSubmitForm(withheld())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "session-withheld.json", append(submit, '\n'))
}

// TestSessionJSONFieldSets pins the session view's keys: RustBrowser's
// 1.x fields, and distill's additions beside them.
func TestSessionJSONFieldSets(t *testing.T) {
	r := withheld()
	// As after a step that escalated.
	r.View.Loop.State.FallbackReason = str("js_app")
	b, err := MarshalSubmitForm(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	assertKeys(t, "view", m, "session_id", "current_url", "redirect_history", "snapshot", "loop", "operation_log", "needs_confirmation", "would_submit")
	loop := m["loop"].(map[string]any)
	assertKeys(t, "loop", loop, "state", "available_actions", "recommended_next_actions", "failure_reason", "failure_detail")
	assertKeys(t, "loop.state", loop["state"].(map[string]any), "url", "status", "title", "content_chars", "action_count", "low_content", "used_headless", "steps_taken", "fallback_reason")
	ops := m["operation_log"].([]any)
	assertKeys(t, "chrome_fallback entry", ops[0].(map[string]any), "step", "op", "target", "attempt", "outcome", "detail", "fallback_reason")
	assertKeys(t, "failed entry", ops[2].(map[string]any), "step", "op", "target", "status", "attempt", "outcome", "failure_reason", "detail")
	ws := m["would_submit"].(map[string]any)
	assertKeys(t, "would_submit", ws, "method", "action", "fields")
	fields, _ := json.Marshal(ws["fields"])
	if string(fields) != `[["qty","2"],["extra","water"],["extra","wifi"],["token","t1"]]` {
		t.Errorf("would_submit.fields = %s, want [name, value] pairs in form order", fields)
	}
}

// A server that predates field_pairs sends only the map: the pairs are
// made from it, names sorted, and action falls back to url.
func TestWouldSubmitFromAnOlderServer(t *testing.T) {
	r := withheld()
	r.WouldSubmit.FieldPairs, r.WouldSubmit.Action = nil, ""
	b, err := MarshalSubmitForm(r)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		WouldSubmit struct {
			Action string      `json:"action"`
			Fields [][2]string `json:"fields"`
		} `json:"would_submit"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(m.WouldSubmit.Fields)
	if m.WouldSubmit.Action != "https://example.com/order" || string(got) != `[["extra","water"],["extra","wifi"],["qty","2"],["token","t1"]]` {
		t.Fatalf("would_submit = %+v", m.WouldSubmit)
	}
}
