package host

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"distill.dev/proto/fetchopts"
)

// Act's methods, and the arguments each takes.
const (
	ActClick  = "click"
	ActType   = "type"
	ActScroll = "scroll"
)

// DefaultActRefusedWords returns the words a selector or description may
// not hold unless the actor's policy says otherwise (act_refused_words): a
// filter in depth against a model steered toward a harmful click, never
// proof that a click is harmless. The approval is the authorization. Each
// call returns a fresh slice, so an actor's list shares no backing array
// with another's.
func DefaultActRefusedWords() []string {
	return []string{"delete", "remove", "destroy", "erase", "unsubscribe", "password", "withdraw", "transfer"}
}

// Limits on act's input.
const (
	maxSelectorBytes    = 512
	maxDescriptionBytes = 500
	maxArgumentBytes    = 2000
)

// ActInput is what the model may choose for act.
type ActInput struct {
	URL         string
	ApprovalID  string
	Method      string
	Selector    string
	Description string
	Arguments   map[string]string
	MaxBytes    int
	OperationID string
}

// Act performs one browser action on the page at the URL, in a page of its
// own, with an approval the host created for this actor, run, exact URL
// and action. Only an approval that consents to it (AllowUnsafe) lets the
// action send a request other than GET: a form's POST, say. The approval is read before anything is spent and consumed,
// once across every gateway, immediately before the action is dispatched;
// an approval bound to the page's candidates first has the page loaded and
// compared. Once dispatched, a failure leaves the effects unknown: the
// envelope says unknown and the operation waits for the host's review.
func (e *Engine) Act(ctx context.Context, who Who, in ActInput) *Envelope {
	action := Action{Method: in.Method, Selector: in.Selector, Arguments: in.Arguments}
	use := func(o *op) Use {
		return Use{Actor: who.Actor, Run: who.Run, URL: in.URL, Action: action,
			Bindings: Bindings{OperationID: o.id, SessionID: who.Session}}
	}
	var approval *Approval
	var steps string
	return e.run(ctx, who, Input{URL: in.URL, MaxBytes: in.MaxBytes, OperationID: in.OperationID}, spec{
		tool: "act", noLoad: true,
		// The action and the page after it, and the page before it when
		// the approval is bound to it.
		steps: func() int {
			if approval != nil && approval.PageDigest != "" {
				return 3
			}
			return 2
		},
		pre: func(ctx context.Context, o *op) error {
			var err error
			if steps, err = actSteps(action); err != nil {
				return err
			}
			if err := refusedWords(o.actor, in.Selector, in.Description); err != nil {
				return err
			}
			if e.approvals == nil {
				return errorf(UnsupportedSecurityCapability, "this gateway keeps no approvals")
			}
			if in.ApprovalID == "" {
				return errorf(ApprovalRequired, "act needs an approval_id: the host must approve this action")
			}
			u := use(o)
			// The operation is not started yet: a binding to it is
			// checked at consumption.
			u.OperationID = in.OperationID
			approval, err = e.approvals.Peek(ctx, in.ApprovalID, u)
			return err
		},
		work: func(ctx context.Context, o *op) (any, error) {
			u := use(o)
			if approval.PageDigest != "" {
				if err := e.load(ctx, o, nil, false); err != nil {
					return nil, err
				}
				d, err := Digest(candidates(o.page.Distilled, ""))
				if err != nil {
					return nil, err
				}
				u.PageDigest = d
			}
			if err := o.call.Step(ctx); err != nil { // the action
				return nil, err
			}
			if err := e.approvals.Consume(ctx, in.ApprovalID, u); err != nil {
				return nil, err
			}
			e.logger.Info("host act dispatched", "actor", who.Actor, "operation", o.id, "approval", in.ApprovalID, "method", in.Method)
			// Without the host's consent, a request that may change
			// something on the site (any but GET) is withheld, not sent.
			if err := e.load(ctx, o, &steps, !approval.AllowUnsafe); err != nil {
				return nil, &unknownEffects{err}
			}
			if w := o.page.Withheld; w != nil {
				return nil, errorf(ApprovalRequired, "the action would send %s %s, which may change something on the site: "+
					"nothing was sent, and the approval does not consent to it", w.GetMethod(), RedactURL(w.GetUrl()))
			}
			return map[string]any{
				"performed":  map[string]any{"method": in.Method, "selector": in.Selector},
				"title":      o.page.Distilled.GetTitle(),
				"candidates": candidates(o.page.Distilled, ""),
			}, nil
		},
	})
}

// actSteps is the action as the renderer's steps, checked before anything
// is spent.
func actSteps(a Action) (string, error) {
	switch {
	case strings.TrimSpace(a.Selector) == "":
		return "", errorf(InvalidInput, "selector is required")
	case len(a.Selector) > maxSelectorBytes || !utf8.ValidString(a.Selector):
		return "", errorf(InvalidInput, "selector must be UTF-8 of at most %d bytes", maxSelectorBytes)
	}
	n := 0
	for k, v := range a.Arguments {
		n += len(k) + len(v)
	}
	if n > maxArgumentBytes {
		return "", errorf(InvalidInput, "arguments are over %d bytes", maxArgumentBytes)
	}
	allowed := map[string][]string{ActClick: nil, ActType: {"text", "key"}, ActScroll: {"direction", "amount"}}
	keys, ok := allowed[a.Method]
	if !ok {
		return "", errorf(InvalidInput, "method must be click, type or scroll")
	}
	for k := range a.Arguments {
		if !slices.Contains(keys, k) {
			return "", errorf(InvalidInput, "%s takes no argument %q", a.Method, k)
		}
	}
	var steps []fetchopts.Step
	switch a.Method {
	case ActClick:
		steps = []fetchopts.Step{{Type: fetchopts.StepClick, Selector: a.Selector}}
	case ActType:
		steps = []fetchopts.Step{{Type: fetchopts.StepType, Selector: a.Selector, Value: a.Arguments["text"]}}
		if k := a.Arguments["key"]; k != "" {
			steps = append(steps, fetchopts.Step{Type: fetchopts.StepPress, Key: k})
		}
	case ActScroll:
		s := fetchopts.Step{Type: fetchopts.StepScroll, Selector: a.Selector, Direction: a.Arguments["direction"]}
		if v, ok := a.Arguments["amount"]; ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return "", errorf(InvalidInput, "amount must be a whole number of pixels")
			}
			s.Amount = n
		}
		steps = []fetchopts.Step{s}
	}
	b, _ := json.Marshal(steps)
	// The renderer's own checks, before the page is loaded.
	if _, err := fetchopts.ParseSteps(string(b)); err != nil {
		return "", errorf(InvalidInput, "%s", strings.TrimPrefix(err.Error(), "--steps: "))
	}
	return string(b), nil
}

func refusedWords(a *Actor, selector, description string) error {
	if len(description) > maxDescriptionBytes || !utf8.ValidString(description) {
		return errorf(InvalidInput, "description must be UTF-8 of at most %d bytes", maxDescriptionBytes)
	}
	text := strings.ToLower(selector + "\n" + description)
	for _, w := range a.ActRefusedWords {
		if strings.Contains(text, w) {
			return errorf(NotAuthorized, "the host refuses actions whose selector or description say %q", w)
		}
	}
	return nil
}

// CheckAction refuses an action act could not dispatch, before the host
// approves it.
func CheckAction(a Action) error {
	_, err := actSteps(a)
	return err
}
