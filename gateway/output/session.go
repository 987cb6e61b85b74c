package output

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// The session view's JSON: {session_id, current_url, redirect_history,
// snapshot} as in 1.x, plus the loop and the operation log.
type sessionViewJSON struct {
	SessionID       string          `json:"session_id"`
	CurrentURL      string          `json:"current_url"`
	RedirectHistory []string        `json:"redirect_history"`
	Snapshot        *distilledJSON  `json:"snapshot"`
	Loop            *loopJSON       `json:"loop,omitempty"`
	OperationLog    []operationJSON `json:"operation_log"`
}

type loopJSON struct {
	State                  loopStateJSON           `json:"state"`
	AvailableActions       []availableActionJSON   `json:"available_actions"`
	RecommendedNextActions []recommendedActionJSON `json:"recommended_next_actions"`
	FailureReason          *string                 `json:"failure_reason,omitempty"`
	FailureDetail          *string                 `json:"failure_detail,omitempty"`
}

type loopStateJSON struct {
	URL            *string `json:"url,omitempty"`
	Status         int32   `json:"status"`
	Title          string  `json:"title"`
	Excerpt        *string `json:"excerpt,omitempty"`
	ContentChars   int64   `json:"content_chars"`
	ActionCount    int32   `json:"action_count"`
	LowContent     bool    `json:"low_content"`
	UsedHeadless   bool    `json:"used_headless"`
	StepsTaken     int32   `json:"steps_taken"`
	FallbackReason *string `json:"fallback_reason,omitempty"`
}

type availableActionJSON struct {
	ActionID  string   `json:"action_id"`
	Kind      string   `json:"kind"`
	Label     string   `json:"label"`
	Target    *string  `json:"target,omitempty"`
	Method    *string  `json:"method,omitempty"`
	Dangerous *bool    `json:"dangerous,omitempty"`
	Fields    []string `json:"fields,omitempty"`
}

type recommendedActionJSON struct {
	ActionID string `json:"action_id"`
	Kind     string `json:"kind"`
	Why      string `json:"why"`
}

type operationJSON struct {
	Step           int32   `json:"step"`
	Op             string  `json:"op"`
	Target         string  `json:"target"`
	Status         *int32  `json:"status,omitempty"`
	Attempt        int32   `json:"attempt"`
	Outcome        string  `json:"outcome"`
	FailureReason  *string `json:"failure_reason,omitempty"`
	Detail         *string `json:"detail,omitempty"`
	FallbackReason *string `json:"fallback_reason,omitempty"`
}

// submitJSON is a form submission's answer: the view, plus what a withheld
// non-GET form would send.
type submitJSON struct {
	sessionViewJSON
	NeedsConfirmation *bool            `json:"needs_confirmation,omitempty"`
	WouldSubmit       *wouldSubmitJSON `json:"would_submit,omitempty"`
}

// wouldSubmitJSON is RustBrowser's {method, action, fields}, fields as
// [name, value] pairs in form order: a field with several values repeats
// its name, and the order is the one the server would receive.
type wouldSubmitJSON struct {
	Method string      `json:"method"`
	Action string      `json:"action"`
	Fields [][2]string `json:"fields"`
}

type sessionCloseJSON struct {
	SessionID string `json:"session_id"`
	Closed    bool   `json:"closed"`
}

// MarshalSessionView returns a session view's compact JSON.
func MarshalSessionView(v *distillv1.SessionView) ([]byte, error) {
	return marshal(viewToJSON(v))
}

// MarshalSubmitForm returns the JSON of a form submission's answer: the
// session view, with needs_confirmation and would_submit when the form was
// withheld for confirmation.
func MarshalSubmitForm(r *distillv1.SessionSubmitFormResponse) ([]byte, error) {
	out := submitJSON{sessionViewJSON: viewToJSON(r.GetView())}
	if r.GetNeedsConfirmation() {
		t := true
		out.NeedsConfirmation = &t
		ws := r.GetWouldSubmit()
		out.WouldSubmit = &wouldSubmitJSON{Method: ws.GetMethod(), Action: ws.GetAction(), Fields: pairs(ws)}
		if out.WouldSubmit.Action == "" {
			out.WouldSubmit.Action = ws.GetUrl()
		}
	}
	return marshal(out)
}

type actJSON struct {
	sessionViewJSON
	NeedsConfirmation *bool             `json:"needs_confirmation,omitempty"`
	WouldSend         *wouldSendJSON    `json:"would_send,omitempty"`
	Steps             *[]stepResultJSON `json:"steps,omitempty"`
}

type wouldSendJSON struct {
	StepIndex int32   `json:"step_index"`
	StepType  string  `json:"step_type"`
	Selector  string  `json:"selector,omitempty"`
	Method    string  `json:"method"`
	URL       string  `json:"url"`
	Body      *string `json:"body,omitempty"`
}

// MarshalAct returns a session_act answer's compact JSON: the session view,
// with needs_confirmation and would_send when the steps were withheld, and
// what the steps returned.
func MarshalAct(r *distillv1.SessionActResponse) ([]byte, error) {
	out := actJSON{sessionViewJSON: viewToJSON(r.GetView())}
	if r.GetNeedsConfirmation() {
		t := true
		out.NeedsConfirmation = &t
		w := r.GetWouldSend()
		out.WouldSend = &wouldSendJSON{StepIndex: w.GetStepIndex(), StepType: w.GetStepType(), Selector: w.GetSelector(),
			Method: w.GetMethod(), URL: w.GetUrl(), Body: w.Body}
	}
	if st := r.GetSteps(); st != nil {
		out.Steps = toJSON(&distillv1.Distilled{Steps: st}).Steps
	}
	return marshal(out)
}

// pairs are a submission's fields in form order. A server older than
// field_pairs sends only the map, whose order is lost: its names are
// sorted then.
func pairs(ws *distillv1.FormSubmission) [][2]string {
	out := [][2]string{}
	for _, p := range ws.GetFieldPairs() {
		out = append(out, [2]string{p.GetName(), p.GetValue()})
	}
	if len(out) > 0 {
		return out
	}
	for _, name := range slices.Sorted(maps.Keys(ws.GetFields())) {
		for _, v := range ws.GetFields()[name].GetValues() {
			out = append(out, [2]string{name, v})
		}
	}
	return out
}

// MarshalSessionClose returns {session_id, closed}.
func MarshalSessionClose(r *distillv1.SessionCloseResponse) ([]byte, error) {
	return marshal(sessionCloseJSON{SessionID: r.GetSessionId(), Closed: r.GetClosed()})
}

func viewToJSON(v *distillv1.SessionView) sessionViewJSON {
	out := sessionViewJSON{
		SessionID:       v.GetSessionId(),
		CurrentURL:      v.GetCurrentUrl(),
		RedirectHistory: nonNil(v.GetRedirectHistory()),
		OperationLog:    []operationJSON{},
	}
	if v.GetSnapshot() != nil {
		out.Snapshot = toJSON(v.GetSnapshot())
	}
	if l := v.GetLoop(); l != nil {
		out.Loop = loopToJSON(l)
	}
	for _, op := range v.GetOperationLog() {
		out.OperationLog = append(out.OperationLog, operationJSON{
			Step: op.GetStep(), Op: op.GetOp(), Target: op.GetTarget(), Status: op.Status,
			Attempt: op.GetAttempt(), Outcome: op.GetOutcome(), FailureReason: op.FailureReason,
			Detail: op.Detail, FallbackReason: op.FallbackReason,
		})
	}
	return out
}

func loopToJSON(l *distillv1.Loop) *loopJSON {
	st := l.GetState()
	out := &loopJSON{
		State: loopStateJSON{
			URL: st.Url, Status: st.GetStatus(), Title: st.GetTitle(), Excerpt: st.Excerpt,
			ContentChars: st.GetContentChars(), ActionCount: st.GetActionCount(),
			LowContent: st.GetLowContent(), UsedHeadless: st.GetUsedHeadless(),
			StepsTaken: st.GetStepsTaken(), FallbackReason: st.FallbackReason,
		},
		AvailableActions:       []availableActionJSON{},
		RecommendedNextActions: []recommendedActionJSON{},
		FailureReason:          l.FailureReason,
		FailureDetail:          l.FailureDetail,
	}
	for _, a := range l.GetAvailableActions() {
		out.AvailableActions = append(out.AvailableActions, availableActionJSON{
			ActionID: a.GetActionId(), Kind: a.GetKind(), Label: a.GetLabel(),
			Target: a.Target, Method: a.Method, Dangerous: a.Dangerous, Fields: a.GetFields(),
		})
	}
	for _, r := range l.GetRecommendedNextActions() {
		out.RecommendedNextActions = append(out.RecommendedNextActions, recommendedActionJSON{ActionID: r.GetActionId(), Kind: r.GetKind(), Why: r.GetWhy()})
	}
	return out
}

// marshal is compact JSON with Markdown's <, > and & left readable.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
