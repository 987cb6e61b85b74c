package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// recordingSessions answers the session methods with a fixed view and
// keeps the last request, to check how tool arguments become requests.
// The stateless methods are not called here.
type recordingSessions struct {
	Service
	last proto.Message
}

func (r *recordingSessions) view() *distillv1.SessionView {
	return &distillv1.SessionView{SessionId: "s_1", CurrentUrl: "https://example.com/", Snapshot: &distillv1.Distilled{Title: "Example"}}
}

func (r *recordingSessions) SessionStart(_ context.Context, req *distillv1.SessionStartRequest) (*distillv1.SessionStartResponse, error) {
	r.last = req
	return &distillv1.SessionStartResponse{View: r.view()}, nil
}

func (r *recordingSessions) SessionObserve(_ context.Context, req *distillv1.SessionObserveRequest) (*distillv1.SessionObserveResponse, error) {
	r.last = req
	return &distillv1.SessionObserveResponse{View: r.view()}, nil
}

func (r *recordingSessions) SessionFollow(_ context.Context, req *distillv1.SessionFollowRequest) (*distillv1.SessionFollowResponse, error) {
	r.last = req
	return &distillv1.SessionFollowResponse{View: r.view()}, nil
}

func (r *recordingSessions) SessionSubmitForm(_ context.Context, req *distillv1.SessionSubmitFormRequest) (*distillv1.SessionSubmitFormResponse, error) {
	r.last = req
	if req.GetConfirm() {
		return &distillv1.SessionSubmitFormResponse{View: r.view()}, nil
	}
	return &distillv1.SessionSubmitFormResponse{View: r.view(), NeedsConfirmation: true, WouldSubmit: &distillv1.FormSubmission{
		Method: "POST", Url: "https://example.com/order", Fields: req.GetValues(),
	}}, nil
}

func (r *recordingSessions) SessionClose(_ context.Context, req *distillv1.SessionCloseRequest) (*distillv1.SessionCloseResponse, error) {
	r.last = req
	return &distillv1.SessionCloseResponse{SessionId: req.GetSessionId(), Closed: true}, nil
}

func values(vs ...string) *distillv1.FieldValues { return &distillv1.FieldValues{Values: vs} }

func TestSessionToolsBuildTheirRequests(t *testing.T) {
	rec := &recordingSessions{}
	cs := connect(t, rec)
	tests := []struct {
		name     string
		tool     string
		args     map[string]any
		want     proto.Message
		wantJSON string
	}{
		{
			name: "start with every option, numbers as strings",
			tool: "session_start",
			args: map[string]any{"url": "https://example.com/", "profile": "full", "max_actions": "10", "timeout_secs": 5,
				"allow_local": "true", "respect_robots": true, "max_action_retries": "2", "js": "off", "js_wait": 250},
			want: &distillv1.SessionStartRequest{Url: "https://example.com/", Profile: distillv1.Profile_PROFILE_FULL,
				MaxActions: proto.Int32(10), TimeoutSecs: proto.Int32(5), AllowLocal: true, RespectRobots: true,
				MaxActionRetries: proto.Int32(2), Js: distillv1.JsMode_JS_MODE_OFF, JsWait: proto.Int32(250)},
			wantJSON: "session_id",
		},
		{
			name:     "start leaves defaults to the session layer",
			tool:     "session_start",
			args:     map[string]any{"url": "https://example.com/"},
			want:     &distillv1.SessionStartRequest{Url: "https://example.com/"},
			wantJSON: "session_id",
		},
		{
			name:     "observe",
			tool:     "session_observe",
			args:     map[string]any{"session_id": "s_1", "url": "https://example.com/next"},
			want:     &distillv1.SessionObserveRequest{SessionId: "s_1", Url: "https://example.com/next"},
			wantJSON: "current_url",
		},
		{
			name:     "follow",
			tool:     "session_follow",
			args:     map[string]any{"session_id": "s_1", "action_id": "link_3"},
			want:     &distillv1.SessionFollowRequest{SessionId: "s_1", ActionId: "link_3"},
			wantJSON: "snapshot",
		},
		{
			name: "submit maps every kind of value",
			tool: "session_submit_form",
			args: map[string]any{"session_id": "s_1", "form_id": "form_0",
				"values": map[string]any{"q": "tide pools", "count": 3, "price": 2.50, "agree": true, "tags": []any{"a", "b"}, "none": []any{}}},
			want: &distillv1.SessionSubmitFormRequest{SessionId: "s_1", FormId: "form_0", Values: map[string]*distillv1.FieldValues{
				"q": values("tide pools"), "count": values("3"), "price": values("2.5"), "agree": values("true"), "tags": values("a", "b"), "none": values(),
			}},
			wantJSON: "needs_confirmation",
		},
		{
			name:     "submit confirmed",
			tool:     "session_submit_form",
			args:     map[string]any{"session_id": "s_1", "form_id": "form_1", "confirm": "true"},
			want:     &distillv1.SessionSubmitFormRequest{SessionId: "s_1", FormId: "form_1", Confirm: true},
			wantJSON: "session_id",
		},
		{
			name:     "close",
			tool:     "session_close",
			args:     map[string]any{"session_id": "s_1"},
			want:     &distillv1.SessionCloseRequest{SessionId: "s_1"},
			wantJSON: "closed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec.last = nil
			got := callJSON[map[string]json.RawMessage](t, cs, tt.tool, tt.args)
			if !proto.Equal(tt.want, rec.last) {
				t.Errorf("request = %v\nwant      %v", rec.last, tt.want)
			}
			if _, ok := got[tt.wantJSON]; !ok {
				t.Errorf("result lacks %s: %v", tt.wantJSON, got)
			}
		})
	}
}

// sessionJSON is the part of a session view these tests read.
type sessionJSON struct {
	SessionID       string   `json:"session_id"`
	CurrentURL      string   `json:"current_url"`
	RedirectHistory []string `json:"redirect_history"`
	Snapshot        struct {
		Status   int    `json:"status"`
		Title    string `json:"title"`
		Markdown string `json:"markdown"`
	} `json:"snapshot"`
	Loop struct {
		State struct {
			Status int `json:"status"`
		} `json:"state"`
		AvailableActions []struct {
			ActionID string `json:"action_id"`
		} `json:"available_actions"`
		FailureReason *string `json:"failure_reason"`
		FailureDetail *string `json:"failure_detail"`
	} `json:"loop"`
	OperationLog      []operationJSON `json:"operation_log"`
	NeedsConfirmation bool            `json:"needs_confirmation"`
	WouldSubmit       json.RawMessage `json:"would_submit"`
}

type operationJSON struct {
	Outcome       string  `json:"outcome"`
	FailureReason *string `json:"failure_reason"`
	Detail        *string `json:"detail"`
}

func (o operationJSON) String() string {
	return fmt.Sprintf("{%s %q %q}", o.Outcome, deref(o.FailureReason), deref(o.Detail))
}

func deref(s *string) string {
	if s == nil {
		return "<absent>"
	}
	return *s
}

// checkOrderSession judges an order made through the session tools: the
// start on the order page, the withheld submit, the confirmed one the
// server rejects, and the corrected one. It is shared by the in-process
// test and the TypeScript client's.
func checkOrderSession(t *testing.T, base string, started, withheld, rejected, placed sessionJSON) {
	t.Helper()
	order := base + "/order"
	if started.CurrentURL != order || len(started.RedirectHistory) != 1 || started.RedirectHistory[0] != order {
		t.Errorf("start: current_url %s, redirect_history %v", started.CurrentURL, started.RedirectHistory)
	}
	wantWS := `{"method":"POST","action":"` + order + `","fields":[["qty","2"],["extra","oil"],["extra","spare"]]}`
	if !withheld.NeedsConfirmation || string(withheld.WouldSubmit) != wantWS {
		t.Errorf("withheld: needs_confirmation %v, would_submit %s\nwant %s", withheld.NeedsConfirmation, withheld.WouldSubmit, wantWS)
	}
	if n := len(withheld.OperationLog); n == 0 || withheld.OperationLog[n-1].Outcome != "needs_confirmation" {
		t.Errorf("withheld: operation_log %v, want needs_confirmation last", withheld.OperationLog)
	}

	// The server's 422 is shown; the session stays on the order page with
	// its form.
	if rejected.Snapshot.Status != 422 || rejected.Snapshot.Title != "Order Not Placed" || !strings.Contains(rejected.Snapshot.Markdown, "Quantity must be at least 1.") {
		t.Errorf("rejected: snapshot %+v, want the 422 answer", rejected.Snapshot)
	}
	if rejected.CurrentURL != order || len(rejected.RedirectHistory) != 1 || rejected.Loop.State.Status != 422 {
		t.Errorf("rejected: current_url %s, redirect_history %v, loop status %d", rejected.CurrentURL, rejected.RedirectHistory, rejected.Loop.State.Status)
	}
	if len(rejected.Loop.AvailableActions) != 1 || rejected.Loop.AvailableActions[0].ActionID != "form_0" {
		t.Errorf("rejected: available_actions %+v, want the order form", rejected.Loop.AvailableActions)
	}
	if fr := rejected.Loop.FailureReason; fr == nil || *fr != "http_status_422" || rejected.Loop.FailureDetail == nil || !strings.Contains(*rejected.Loop.FailureDetail, "422 Unprocessable Entity") {
		t.Errorf("rejected: loop failure_reason %q detail %q", deref(fr), deref(rejected.Loop.FailureDetail))
	}
	if n := len(rejected.OperationLog); n == 0 || rejected.OperationLog[n-1].Outcome != "verify_failed" || rejected.OperationLog[n-1].FailureReason == nil || *rejected.OperationLog[n-1].FailureReason != "http_status_422" {
		t.Errorf("rejected: operation_log %v, want verify_failed http_status_422 last", rejected.OperationLog)
	}

	if placed.CurrentURL != base+"/a" || strings.Join(placed.RedirectHistory, " ") != order+" "+base+"/a" || placed.Loop.FailureReason != nil {
		t.Errorf("placed: current_url %s, redirect_history %v, failure_reason %q", placed.CurrentURL, placed.RedirectHistory, deref(placed.Loop.FailureReason))
	}
}

// The session tools' JSON is RustBrowser's: redirect_history, would_submit
// pairs, stable tokens, and the error answer to a sent form.
func TestSessionToolsShowRustBrowserShapes(t *testing.T) {
	t.Parallel()
	site := pages(t)
	cs := connect(t, newService(t))
	started := callJSON[sessionJSON](t, cs, "session_start", map[string]any{"url": site.URL + "/order", "allow_local": true, "js": "off"})
	submit := func(qty string, confirm bool) sessionJSON {
		return callJSON[sessionJSON](t, cs, "session_submit_form", map[string]any{
			"session_id": started.SessionID, "form_id": "form_0", "values": map[string]any{"qty": qty}, "confirm": confirm,
		})
	}
	withheld := submit("2", false)
	rejected := submit("0", true)
	placed := submit("2", true)
	checkOrderSession(t, site.URL, started, withheld, rejected, placed)
}
