package session

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/cookies"
	"distill.dev/services/fetcher/pipeline"
)

func TestDeadlineFormula(t *testing.T) {
	t.Parallel()
	tests := []struct {
		retries int
		timeout int32
		jsWait  *int32
		want    time.Duration
	}{
		{retries: 1, timeout: 20, want: 55 * time.Second},
		{retries: 0, timeout: 20, want: 35 * time.Second},
		{retries: 2, timeout: 5, want: 30 * time.Second},
		{retries: 0, timeout: 5, jsWait: proto.Int32(30000), want: 45 * time.Second},
		{retries: 1, timeout: 20, jsWait: proto.Int32(1000), want: 55 * time.Second},
	}
	for _, tt := range tests {
		s := settings{retries: tt.retries, timeoutSecs: tt.timeout, jsWait: tt.jsWait}
		if got := s.deadline(StepMargin); got != tt.want {
			t.Errorf("deadline(retries %d, timeout %d, js_wait %v) = %s, want %s", tt.retries, tt.timeout, tt.jsWait, got, tt.want)
		}
	}
}

func TestOutcomeSaysWhichAttemptsToRepeat(t *testing.T) {
	t.Parallel()
	live := context.Background()
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	answer := func(status int32) *pipeline.Result {
		return &pipeline.Result{Distilled: &distillv1.Distilled{Status: status, FinalUrl: "https://example.com/p"}}
	}
	tests := []struct {
		name        string
		ctx         context.Context
		res         *pipeline.Result
		err         error
		wantOutcome string
		wantStatus  int32 // 0: none recorded
		wantReason  string
		wantDetail  string
		wantAgain   bool
	}{
		{"network error", live, nil, failure.New(failure.Network, "connection refused"), "transport_error", 0, "network", "connection refused", true},
		{"fetch timeout", live, nil, failure.New(failure.Timeout, "read timed out"), "timeout", 0, "timeout", "read timed out", true},
		{"step deadline", live, nil, context.DeadlineExceeded, "timeout", 0, "timeout", "context deadline exceeded", true},
		{"blocked by policy", live, nil, failure.New(failure.Blocked, "private address"), "blocked", 0, "blocked", "private address", false},
		{"robots.txt", live, nil, failure.New(failure.RobotsDisallowed, "disallowed by robots.txt"), "blocked", 0, "robots_disallowed", "disallowed by robots.txt", false},
		{"too large", live, nil, failure.New(failure.TooLarge, "body over 8 MiB"), "transport_error", 0, "too_large", "body over 8 MiB", false},
		{"network error once the step has ended", ended, nil, failure.New(failure.Network, "connection refused"), "transport_error", 0, "network", "connection refused", false},
		{"429", live, answer(429), nil, "retryable_status", 429, "http_status_429", "HTTP 429 Too Many Requests at https://example.com/p", true},
		{"503", live, answer(503), nil, "retryable_status", 503, "http_status_503", "HTTP 503 Service Unavailable at https://example.com/p", true},
		{"404", live, answer(404), nil, "verify_failed", 404, "http_status_404", "HTTP 404 Not Found at https://example.com/p", false},
		{"422", live, answer(422), nil, "verify_failed", 422, "http_status_422", "HTTP 422 Unprocessable Entity at https://example.com/p", false},
		{"200", live, answer(200), nil, "ok", 200, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			entry := &distillv1.Operation{}
			again := outcome(tt.ctx, entry, tt.res, tt.err)
			if again != tt.wantAgain {
				t.Errorf("again = %v, want %v", again, tt.wantAgain)
			}
			if entry.GetOutcome() != tt.wantOutcome || entry.GetStatus() != tt.wantStatus || entry.GetFailureReason() != tt.wantReason || entry.GetDetail() != tt.wantDetail {
				t.Errorf("entry = %v, want outcome %q status %d reason %q detail %q", entry, tt.wantOutcome, tt.wantStatus, tt.wantReason, tt.wantDetail)
			}
			if tt.wantStatus == 0 && entry.Status != nil {
				t.Errorf("an attempt without an answer recorded status %d", entry.GetStatus())
			}
		})
	}
}

func TestRetryWait(t *testing.T) {
	t.Parallel()
	if got := retryWait(1, &pipeline.Result{RetryAfter: 7 * time.Second}); got != 7*time.Second {
		t.Errorf("with Retry-After 7s: wait %s", got)
	}
	// Backoff is random: every draw must stay under its ceiling, which
	// doubles from retryBase and stops at retryMax.
	for _, tt := range []struct {
		n       int
		ceiling time.Duration
	}{{1, retryBase}, {2, 2 * retryBase}, {3, 4 * retryBase}, {30, retryMax}} {
		for range 200 {
			if got := retryWait(tt.n, &pipeline.Result{}); got < 0 || got > tt.ceiling {
				t.Fatalf("wait before attempt %d = %s, want within [0, %s]", tt.n+1, got, tt.ceiling)
			}
		}
	}
	if got := retryWait(1, nil); got < 0 || got > retryBase {
		t.Errorf("after an error: wait %s, want within [0, %s]", got, retryBase)
	}
}

// scripted answers each attempt with the next of its answers.
type scripted struct {
	answers []*pipeline.Result
	calls   int
}

func (s *scripted) Do(context.Context, pipeline.Request) (*pipeline.Result, error) {
	s.calls++
	return s.answers[min(s.calls, len(s.answers))-1], nil
}

func TestAttemptRepeatsOnlyWhatMaySucceed(t *testing.T) {
	t.Parallel()
	busy := &pipeline.Result{Distilled: &distillv1.Distilled{Status: 503}, RetryAfter: time.Millisecond}
	busyLong := &pipeline.Result{Distilled: &distillv1.Distilled{Status: 503}, RetryAfter: time.Hour}
	ok := &pipeline.Result{Distilled: &distillv1.Distilled{Status: 200}}
	tests := []struct {
		name       string
		answers    []*pipeline.Result
		idempotent bool
		retries    int
		want       *pipeline.Result
		wantCalls  int
	}{
		{"a 503 then a page", []*pipeline.Result{busy, ok}, true, 2, ok, 2},
		{"retries run out", []*pipeline.Result{busy}, true, 2, busy, 3},
		{"no retries", []*pipeline.Result{busy, ok}, true, 0, busy, 1},
		{"a POST is sent once", []*pipeline.Result{busy, ok}, false, 2, busy, 1},
		{"a Retry-After past the deadline stands", []*pipeline.Result{busyLong, ok}, true, 2, busyLong, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := &scripted{answers: tt.answers}
			m := New(quiet, d, Config{})
			s := &Session{set: settings{retries: tt.retries}, steps: 4}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, ops, err := m.attempt(ctx, s, cookies.New(), "observe", "https://example.com/", navigation{url: "https://example.com/", idempotent: tt.idempotent})
			if err != nil {
				t.Fatal(err)
			}
			if res != tt.want || d.calls != tt.wantCalls || len(ops) != tt.wantCalls {
				t.Fatalf("answer %v after %d calls, %d operations; want %v after %d", res, d.calls, len(ops), tt.want, tt.wantCalls)
			}
			for i, op := range ops {
				if op.GetStep() != 5 || op.GetAttempt() != int32(i+1) || op.GetOp() != "observe" {
					t.Errorf("operation %d = %v, want step 5 attempt %d", i, op, i+1)
				}
			}
			if s.steps != 4 {
				t.Errorf("attempting moved the session to step %d", s.steps)
			}
		})
	}
}

// distillFunc adapts a function to Distiller.
type distillFunc func(ctx context.Context, req pipeline.Request) (*pipeline.Result, error)

func (f distillFunc) Do(ctx context.Context, req pipeline.Request) (*pipeline.Result, error) {
	return f(ctx, req)
}

// A caller that goes away while a retry waits ends the step with its
// context's error, not the last answer.
func TestAttemptEndsWithTheCaller(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	m := New(quiet, distillFunc(func(context.Context, pipeline.Request) (*pipeline.Result, error) {
		calls++
		cancel()
		return &pipeline.Result{Distilled: &distillv1.Distilled{Status: 503}, RetryAfter: time.Hour}, nil
	}), Config{})
	s := &Session{set: settings{retries: 2}}
	_, ops, err := m.attempt(ctx, s, cookies.New(), "observe", "https://example.com/", navigation{url: "https://example.com/", idempotent: true})
	if !errors.Is(err, context.Canceled) || calls != 1 || len(ops) != 1 {
		t.Fatalf("err = %v after %d calls, %d operations; want context.Canceled after 1", err, calls, len(ops))
	}
}
