package session

import (
	"context"
	"errors"
	"fmt"
	"math"
	mathrand "math/rand/v2"
	"net/http"
	"strings"
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

// sent reports whether nav sends a request that changes something: a
// form other than GET.
func (nav navigation) sent() bool {
	return nav.method != "" && nav.method != http.MethodGet
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
	s.commit(jar, res, nav)
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
		if res != nil && res.Escalated != "" {
			ops = append(ops, escalation(s.steps+1, op, target, n, res))
		}
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

// Outcomes of the operation log: stable tokens an agent may branch on.
const (
	outcomeOK                = "ok"
	outcomeRetryableStatus   = "retryable_status"
	outcomeVerifyFailed      = "verify_failed"
	outcomeNeedsConfirmation = "needs_confirmation"
	outcomeTransportError    = "transport_error"
	outcomeTimeout           = "timeout"
	outcomeBlocked           = "blocked"
	outcomeChromeFallback    = "chrome_fallback"
)

// outcome records an attempt's answer in its log entry and reports
// whether another attempt might fare better: after a transient error, a
// 429 or a 5xx. The entry's outcome and failure_reason are tokens; what
// happened in words goes to its detail.
func outcome(ctx context.Context, entry *distillv1.Operation, res *pipeline.Result, err error) (again bool) {
	switch {
	case err != nil:
		entry.Outcome = errorOutcome(err)
		entry.FailureReason = proto.String(errorToken(err))
		entry.Detail = proto.String(err.Error())
		return transient(ctx, err)
	case res.Distilled.GetStatus() >= 400:
		code := res.Distilled.GetStatus()
		retryable := code == http.StatusTooManyRequests || code >= 500
		entry.Outcome, entry.Status = outcomeVerifyFailed, proto.Int32(code)
		if retryable {
			entry.Outcome = outcomeRetryableStatus
		}
		entry.FailureReason = proto.String(httpToken(code))
		entry.Detail = proto.String(httpFailure(code, res.Distilled.GetFinalUrl()))
		return retryable
	}
	entry.Outcome, entry.Status = outcomeOK, proto.Int32(res.Distilled.GetStatus())
	return false
}

// errorOutcome sorts a step's error into the few outcomes an agent acts
// on differently: wait and retry, give up on the URL, or look closer.
func errorOutcome(err error) string {
	switch failure.CodeOf(err) {
	case failure.Timeout:
		return outcomeTimeout
	case failure.Blocked, failure.RobotsDisallowed:
		return outcomeBlocked
	}
	return outcomeTransportError
}

// errorToken is the error's code as a stable lower-case token: network,
// timeout, blocked, robots_disallowed, too_large, ...
func errorToken(err error) string {
	return strings.ToLower(strings.TrimPrefix(failure.CodeOf(err).String(), "ERROR_CODE_"))
}

// escalation is the log entry of an attempt that went to the headless
// renderer, whether or not its render was kept: an escalation that did
// not help still cost a browser and explains a slow step.
func escalation(step int32, op, target string, attempt int, res *pipeline.Result) *distillv1.Operation {
	detail := "rendered headless (" + res.Escalated + ")"
	switch {
	case res.RenderErr != nil:
		detail += "; the render failed, the page as fetched was kept: " + res.RenderErr.Error()
	case res.FallbackReason != "":
		detail += "; the render was kept"
	default:
		detail += "; the render was no better than the page as fetched, which was kept"
	}
	return &distillv1.Operation{
		Step: step, Op: op, Target: target, Attempt: int32(attempt), Outcome: outcomeChromeFallback,
		FallbackReason: proto.String(res.Escalated), Detail: proto.String(detail),
	}
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
func (s *Session) commit(jar *cookies.Jar, res *pipeline.Result, nav navigation) {
	s.steps++
	// Cookies set by an answer are kept whatever its status: a browser
	// keeps them too.
	s.jar = jar
	s.fallback = res.Escalated
	s.answer = nil
	status := res.Distilled.GetStatus()
	s.failure, s.failureDetail = "", ""
	if status >= 400 {
		s.failure = httpToken(status)
		s.failureDetail = httpFailure(status, res.Distilled.GetFinalUrl())
		if s.snapshot != nil {
			// An HTTP error does not move the session: the page it is on,
			// its history and its actions stay, and the loop says what
			// failed. The answer to a form that was sent is shown, though:
			// it is often the server saying what to fix, and the agent
			// cannot see it again by observing.
			if nav.sent() {
				s.answer = res.Distilled
			}
			return
		}
	}
	s.url = res.Distilled.GetFinalUrl()
	s.pushHistory(s.url)
	s.snapshot = res.Distilled
	s.visited[s.url] = true
}

// pushHistory records a navigation the session completed, keeping the
// most recent maxHistory: a long session must not grow without bound in
// its store or in every view.
func (s *Session) pushHistory(u string) {
	s.history = append(s.history, u)
	if n := len(s.history) - maxHistory; n > 0 {
		s.history = append([]string(nil), s.history[n:]...)
	}
}

// stepError explains a failed step.
func (m *Manager) stepError(callerCtx, stepCtx context.Context, deadline time.Duration, op string, nav navigation, err error) error {
	sent := nav.sent()
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

// httpToken is the failure_reason of an HTTP error status.
func httpToken(status int32) string {
	return fmt.Sprintf("http_status_%d", status)
}

// httpFailure is an HTTP error status in words.
func httpFailure(status int32, url string) string {
	return fmt.Sprintf("HTTP %d %s at %s", status, http.StatusText(int(status)), url)
}
