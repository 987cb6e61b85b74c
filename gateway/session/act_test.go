package session

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/pipeline"
)

// An act asks for withholding unless confirmed, leaves the session as it
// was when withheld, and is attempted once even when the failure would
// make another step retry.
func TestActWithholdsAndNeverRetries(t *testing.T) {
	t.Parallel()
	var acts []pipeline.Request
	fail := false
	m := New(quiet, distillFunc(func(_ context.Context, req pipeline.Request) (*pipeline.Result, error) {
		if req.Options.GetSteps() == "" {
			return &pipeline.Result{Distilled: &distillv1.Distilled{Status: http.StatusOK, FinalUrl: req.URL}}, nil
		}
		acts = append(acts, req)
		switch {
		case fail:
			return nil, failure.New(failure.Network, "connection reset")
		case req.WithholdUnsafe:
			return &pipeline.Result{Withheld: &distillv1.WithheldRequest{StepIndex: 0, StepType: "click", Method: "POST", Url: req.URL + "/buy"}}, nil
		}
		return &pipeline.Result{Distilled: &distillv1.Distilled{Status: http.StatusOK, FinalUrl: req.URL + "/done",
			Steps: &distillv1.StepResults{Items: []*distillv1.StepResult{{Index: 0, Type: "executeJavascript"}}}}}, nil
	}), Config{})
	ctx := context.Background()
	started, err := m.Start(ctx, &distillv1.SessionStartRequest{Url: "https://example.com/shop", MaxActionRetries: int32p(2)})
	if err != nil {
		t.Fatal(err)
	}
	id := started.GetView().GetSessionId()
	steps := `[{"type":"click","selector":"#buy"}]`

	res, err := m.Act(ctx, &distillv1.SessionActRequest{SessionId: id, Steps: steps})
	if err != nil {
		t.Fatal(err)
	}
	if !res.GetNeedsConfirmation() || res.GetWouldSend().GetMethod() != "POST" || res.GetView().GetCurrentUrl() != "https://example.com/shop" {
		t.Fatalf("act without confirm = %v, want withheld and the session where it was", res)
	}
	if len(acts) != 1 || !acts[0].WithholdUnsafe || acts[0].Options.GetJs() != distillv1.JsMode_JS_MODE_ALWAYS {
		t.Fatalf("the act ran as %v, want one render withholding", acts)
	}

	res, err = m.Act(ctx, &distillv1.SessionActRequest{SessionId: id, Steps: steps, Confirm: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.GetNeedsConfirmation() || res.GetView().GetCurrentUrl() != "https://example.com/shop/done" || len(res.GetSteps().GetItems()) != 1 {
		t.Fatalf("confirmed act = %v", res)
	}
	if res.GetView().GetSnapshot().GetSteps() != nil {
		t.Errorf("the snapshot the session keeps carries the steps' results")
	}
	if len(acts) != 2 || acts[1].WithholdUnsafe {
		t.Fatalf("confirmed act withheld: %v", acts[1])
	}

	fail = true
	_, err = m.Act(ctx, &distillv1.SessionActRequest{SessionId: id, Steps: steps, Confirm: true})
	if err == nil || len(acts) != 3 {
		t.Fatalf("err = %v after %d acts; want one failed attempt, not retried", err, len(acts)-2)
	}

	if _, err := m.Act(ctx, &distillv1.SessionActRequest{SessionId: id, Steps: `[{"type":"hover"}]`}); failure.CodeOf(err) != failure.InvalidArgument || !strings.Contains(err.Error(), "unknown type") {
		t.Errorf("bad steps: %v", err)
	}
	if _, err := m.Act(ctx, &distillv1.SessionActRequest{SessionId: id}); failure.CodeOf(err) != failure.InvalidArgument {
		t.Errorf("no steps: %v", err)
	}
}

func int32p(v int32) *int32 { return &v }
