package session

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/pipeline"
)

// Act runs steps in the session's page: its current URL rendered with its
// cookies. Without confirm, the first request other than GET a step would
// send is withheld and the session left as it was but for its log; the
// answer names the request. An act is attempted once, never again: its
// steps may have changed something on the site.
func (m *Manager) Act(ctx context.Context, req *distillv1.SessionActRequest) (*distillv1.SessionActResponse, error) {
	steps, err := fetchopts.ParseSteps(req.GetSteps())
	if err != nil {
		return nil, failure.Wrap(failure.InvalidArgument, err, "invalid steps")
	}
	if len(steps) == 0 {
		return nil, failure.New(failure.InvalidArgument, "steps is required: a JSON array of steps")
	}
	var out *distillv1.SessionActResponse
	_, err = m.step(ctx, req.GetSessionId(), func(s *Session) (*distillv1.SessionView, error) {
		if s.url == "" {
			return nil, failure.New(failure.InvalidArgument, "the session has no page to act on yet")
		}
		opts := s.set.options()
		opts.Steps = req.GetSteps()
		opts.Js = distillv1.JsMode_JS_MODE_ALWAYS
		deadline := s.set.deadline(m.cfg.StepMargin) + fetchopts.StepsBudget(opts)
		stepCtx, cancel := context.WithTimeout(ctx, deadline)
		defer cancel()

		jar := s.jar.Clone()
		res, err := m.d.Do(stepCtx, pipeline.Request{URL: s.url, Options: opts, Jar: jar, WithholdUnsafe: !req.GetConfirm()})
		entry := &distillv1.Operation{Step: s.steps + 1, Op: "act", Target: s.url, Attempt: 1}
		if err == nil && res.Withheld != nil {
			w := res.Withheld
			entry.Outcome = outcomeNeedsConfirmation
			entry.Detail = proto.String(fmt.Sprintf("step %d (%s) would send %s %s; needs confirm=true", w.GetStepIndex(), w.GetStepType(), w.GetMethod(), w.GetUrl()))
			s.appendLog([]*distillv1.Operation{entry})
			out = &distillv1.SessionActResponse{View: s.view(), NeedsConfirmation: true, WouldSend: w}
			return out.View, nil
		}
		outcome(stepCtx, entry, res, err)
		s.appendLog([]*distillv1.Operation{entry})
		if err != nil {
			nav := navigation{url: s.url}
			if req.GetConfirm() {
				// Confirmed steps may have sent what cannot be sent
				// twice: say so as a confirmed form does.
				nav.method = "steps' requests"
			}
			return nil, m.stepError(ctx, stepCtx, deadline, "act", nav, err)
		}
		// What the steps returned is this answer's, not the snapshot's the
		// session keeps (and stores) for later steps.
		results := res.Distilled.GetSteps()
		res.Distilled.Steps = nil
		s.commit(jar, res, navigation{url: s.url})
		out = &distillv1.SessionActResponse{View: s.view(), Steps: results}
		return out.View, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
