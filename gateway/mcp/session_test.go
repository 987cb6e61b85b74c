package mcp

import (
	"context"
	"encoding/json"
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
