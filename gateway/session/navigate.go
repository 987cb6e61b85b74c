package session

import (
	"context"
	"errors"
	"fmt"
	"math"
	mathrand "math/rand/v2"
	"net/http"
	"time"

	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/cookies"
	"distill.dev/services/fetcher/pipeline"
)

// Backoff between the attempts of a step that has no Retry-After to go by.
const (
	retryBase = 500 * time.Millisecond
	retryMax  = 10 * time.Second
)

// ErrMaybeSent is in the chain of a step's error when the step sent a
// request that is not safe to repeat (a confirmed form other than GET) and
// got no answer in time: the server may have acted on it, so it must not
// be sent again.
var ErrMaybeSent = errors.New("the request may already have been received by the server")

// maybeSent adds ErrMaybeSent to a cause's chain without changing its
// text.
type maybeSent struct{ error }

func (e maybeSent) Unwrap() []error { return []error{e.error, ErrMaybeSent} }

// navigation is what one step requests.
type navigation struct {
	url         string
	method      string // "" for GET
	body        []byte
	contentType string
	// idempotent steps may be attempted again.
	idempotent bool
}

// deadline bounds one step: (max_action_retries + 1) × timeout_secs, or
// js_wait when that is longer, plus the margin.
func (s settings) deadline(margin time.Duration) time.Duration {
	d := time.Duration(s.retries+1) * time.Duration(s.timeoutSecs) * time.Second
	if s.jsWait != nil {
		d = max(d, time.Duration(*s.jsWait)*time.Millisecond)
	}
	return d + margin
}

// navigate runs one step and commits it once it settles.
func (m *Manager) navigate(ctx context.Context, s *Session, op, target string, nav navigation) (*distillv1.SessionView, error) {
	deadline := s.set.deadline(m.cfg.StepMargin)
	stepCtx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()

	// The attempts fill a copy of the jar: a step that fails keeps none of
	// the cookies it was sent.
	jar := s.jar.Clone()
	res, ops, err := m.attempt(stepCtx, s, jar, op, target, nav)
	s.appendLog(ops)
	if err != nil {
		return nil, m.stepError(ctx, stepCtx, deadline, op, nav, err)
	}
	s.commit(jar, res)
	return s.view(), nil
}

// attempt runs nav until its answer stands: once, or for an idempotent
// step up to retries more times while the failure is worth another try
// and the step has time to wait for it. It returns the last answer and an
// operation for each attempt.
func (m *Manager) attempt(ctx context.Context, s *Session, jar *cookies.Jar, op, target string, nav navigation) (*pipeline.Result, []*distillv1.Operation, error) {
	attempts := 1
	if nav.idempotent {
		attempts += s.set.retries
	}
	var ops []*distillv1.Operation
	for n := 1; ; n++ {
		res, err := m.d.Do(ctx, pipeline.Request{
			URL: nav.url, Options: s.set.options(),
			Method: nav.method, Body: nav.body, BodyContentType: nav.contentType,
			Jar: jar,
		})
		entry := &distillv1.Operation{Step: s.steps + 1, Op: op, Target: target, Attempt: int32(n)}
		ops = append(ops, entry)
		if !outcome(ctx, entry, res, err) || n >= attempts {
			return res, ops, err
		}
		wait := retryWait(n, res)
		if d, ok := ctx.Deadline(); ok && time.Until(d) <= wait {
			// Waiting would miss the step's deadline: the last answer
			// stands.
			return res, ops, err
		}
		if err := sleep(ctx, wait); err != nil {
			return res, ops, err
		}
	}
}

// outcome records an attempt's answer in its log entry and reports
// whether another attempt might fare better: after a transient error, a
// 429 or a 5xx.
func outcome(ctx context.Context, entry *distillv1.Operation, res *pipeline.Result, err error) (again bool) {
	switch {
	case err != nil:
		entry.Outcome = "error"
		entry.FailureReason = proto.String(err.Error())
		return transient(ctx, err)
	case res.Distilled.GetStatus() >= 400:
		code := res.Distilled.GetStatus()
		entry.Outcome, entry.Status = "http_error", proto.Int32(code)
		entry.FailureReason = proto.String(httpFailure(code, res.Distilled.GetFinalUrl()))
		return code == http.StatusTooManyRequests || code >= 500
	}
	entry.Outcome, entry.Status = "ok", proto.Int32(res.Distilled.GetStatus())
	return false
}

// retryWait is the pause before attempt n+1: what the server asked for
// with Retry-After, else a backoff.
func retryWait(n int, res *pipeline.Result) time.Duration {
	if res != nil && res.RetryAfter > 0 {
		return res.RetryAfter
	}
	return backoff(n)
}

// sleep waits d, or less if ctx ends first, which it then reports.
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	return ctx.Err()
}

// commit takes in the answer of a step that settled, with the jar its
// attempts filled.
func (s *Session) commit(jar *cookies.Jar, res *pipeline.Result) {
	s.steps++
	// Cookies set by an answer are kept whatever its status: a browser
	// keeps them too.
	s.jar = jar
	status := res.Distilled.GetStatus()
	s.failure = ""
	if status >= 400 {
		s.failure = httpFailure(status, res.Distilled.GetFinalUrl())
		if s.snapshot != nil {
			// An HTTP error does not move the session: the page it is on,
			// its history and its actions stay, and the loop says what
			// failed.
			return
		}
	}
	s.url = res.Distilled.GetFinalUrl()
	s.history = res.RedirectHistory
	s.snapshot = res.Distilled
	s.fallback = res.FallbackReason
	s.visited[s.url] = true
}

// stepError explains a failed step.
func (m *Manager) stepError(callerCtx, stepCtx context.Context, deadline time.Duration, op string, nav navigation, err error) error {
	sent := nav.method != "" && nav.method != http.MethodGet
	timedOut := errors.Is(stepCtx.Err(), context.DeadlineExceeded) && callerCtx.Err() == nil
	switch {
	case sent && (timedOut || failure.CodeOf(err) == failure.Timeout):
		return failure.Wrap(failure.Timeout, maybeSent{err}, "%s: no answer in time to the %s; the request may already have been received by the server, so do not submit it again: observe the page to see what happened", op, nav.method)
	case timedOut:
		return failure.Wrap(failure.Timeout, err, "%s: step exceeded its %s deadline; the session is unchanged and still usable", op, deadline)
	}
	return failure.Wrap(failure.CodeOf(err), err, "%s failed; the session is unchanged", op)
}

// transient reports whether another attempt of an idempotent step might
// succeed: a network failure or a fetch timeout, while the step still has
// time.
func transient(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	switch failure.CodeOf(err) {
	case failure.Network, failure.Timeout:
		return true
	}
	return false
}

// backoff is a full-jitter wait before attempt+1.
func backoff(attempt int) time.Duration {
	ceiling := min(retryMax, time.Duration(float64(retryBase)*math.Pow(2, float64(attempt-1))))
	return mathrand.N(ceiling + 1)
}

func httpFailure(status int32, url string) string {
	return fmt.Sprintf("HTTP %d %s at %s", status, http.StatusText(int(status)), url)
}
