package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ApprovalBucket keeps the approvals a host created for act.
const ApprovalBucket = "distill_host_approvals"

// Approval lets one action run once: bound to an actor, a run, the exact
// URL and the action's digest, until it expires; optionally to an
// operation, to the page's candidates and to the client's session.
// Consuming it is a compare-and-set, so it fires at most once across every
// gateway.
type Approval struct {
	ID           string    `json:"id"`
	Actor        string    `json:"actor"`
	Run          string    `json:"run"`
	URL          string    `json:"url"`
	ActionDigest string    `json:"action_digest"`
	Expires      time.Time `json:"expires"`
	Bindings
	// AllowUnsafe is the host's consent to the action sending requests
	// other than GET (submitting a form): without it they are withheld.
	AllowUnsafe bool `json:"allow_unsafe,omitempty"`
	Revoked     bool `json:"revoked,omitempty"`
	Consumed    bool `json:"consumed,omitempty"`
}

// Bindings are an approval's optional bindings: each one set must match
// the call that uses it.
type Bindings struct {
	OperationID string `json:"operation_id,omitempty"`
	// PageDigest is the digest of the page's candidates (an inspect
	// envelope's, made without instruction and not truncated): the page
	// must still offer what the host saw. It is no DOM revision.
	PageDigest string `json:"page_digest,omitempty"`
	// SessionID is the client's session: the gRPC call's
	// distill-session-id metadata, or the MCP session.
	SessionID string `json:"session_id,omitempty"`
}

// Action is what act would dispatch; its digest binds an approval to it.
// Arguments are strings, so that an approval made over gRPC and an act
// asked over MCP digest the same action the same way.
type Action struct {
	Method    string            `json:"method"`
	Selector  string            `json:"selector"`
	Arguments map[string]string `json:"arguments,omitempty"`
}

// MaxApprovalTTL bounds an approval's life.
const MaxApprovalTTL = 24 * time.Hour

// ActionDigest is the SHA-256 of the action's canonical JSON.
func ActionDigest(a Action) (string, error) {
	c, err := Canonical(a)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}

// Approvals keeps approvals in JetStream key-value.
type Approvals struct {
	js       jetstream.JetStream
	storage  jetstream.StorageType
	replicas int
	now      func() time.Time

	mu sync.Mutex
	kv jetstream.KeyValue
}

// NewApprovals keeps approvals in js (WithStorage, WithClock apply).
func NewApprovals(js jetstream.JetStream, opts ...BudgetsOption) *Approvals {
	b := NewBudgets(js, opts...)
	return &Approvals{js: js, storage: b.storage, replicas: b.replicas, now: b.now}
}

func (a *Approvals) bucket(ctx context.Context) (jetstream.KeyValue, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.kv != nil {
		return a.kv, nil
	}
	kv, err := a.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: ApprovalBucket, History: 1, TTL: operationTTL, Storage: a.storage, Replicas: a.replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("approval store: %w", err)
	}
	a.kv = kv
	return kv, nil
}

func approvalKey(id string) string { return "approval." + keyPart(id) }

// Create records an approval the host made (an operator's call), valid for
// ttl.
func (a *Approvals) Create(ctx context.Context, actor, run, url string, action Action, ttl time.Duration, bind Bindings, allowUnsafe bool) (*Approval, error) {
	switch {
	case ttl <= 0 || ttl > MaxApprovalTTL:
		return nil, errorf(InvalidInput, "an approval lasts a positive time of at most %s", MaxApprovalTTL)
	case actor == "" || run == "" || url == "":
		return nil, errorf(InvalidInput, "an approval names its actor, run and URL")
	}
	digest, err := ActionDigest(action)
	if err != nil {
		return nil, errorf(InvalidInput, "the action cannot be digested: %v", err)
	}
	kv, err := a.bucket(ctx)
	if err != nil {
		return nil, err
	}
	ap := &Approval{ID: newID(), Actor: actor, Run: run, URL: url, ActionDigest: digest,
		Expires: a.now().Add(ttl).UTC(), Bindings: bind, AllowUnsafe: allowUnsafe}
	b, _ := json.Marshal(ap)
	if _, err := kv.Create(ctx, approvalKey(ap.ID), b); err != nil {
		return nil, fmt.Errorf("approval store: %w", err)
	}
	return ap, nil
}

// Revoke withdraws an approval; consuming it afterwards is APPROVAL_STALE.
func (a *Approvals) Revoke(ctx context.Context, id string) (*Approval, error) {
	return a.change(ctx, id, func(ap *Approval) error {
		ap.Revoked = true
		return nil
	})
}

// Use is a call that would use an approval: what it must match.
type Use struct {
	Actor, Run, URL string
	Action          Action
	// Bindings are the call's: its operation, the digest of the page's
	// candidates (empty when the page was not loaded yet) and its session.
	Bindings
}

// Peek checks the approval id against use without consuming it: act asks
// it before any budget is spent or page loaded. A page binding is checked
// only when use carries a page digest.
func (a *Approvals) Peek(ctx context.Context, id string, use Use) (*Approval, error) {
	kv, err := a.bucket(ctx)
	if err != nil {
		return nil, err
	}
	e, err := kv.Get(ctx, approvalKey(id))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, errorf(ApprovalRequired, "no approval %q: the host must approve this action", id)
	}
	if err != nil {
		return nil, fmt.Errorf("approval store: %w", err)
	}
	var ap Approval
	if err := json.Unmarshal(e.Value(), &ap); err != nil {
		return nil, fmt.Errorf("approval store: %w", err)
	}
	if err := a.matches(&ap, use); err != nil {
		return nil, err
	}
	return &ap, nil
}

// Consume uses the approval id for use, once: immediately before
// dispatch. Anything that does not match, has expired, was revoked or was
// consumed already is APPROVAL_STALE; an id that names no approval is
// APPROVAL_REQUIRED.
func (a *Approvals) Consume(ctx context.Context, id string, use Use) error {
	_, err := a.change(ctx, id, func(ap *Approval) error {
		if err := a.matches(ap, use); err != nil {
			return err
		}
		if ap.PageDigest != "" && use.PageDigest == "" {
			return errorf(ApprovalStale, "approval %s is bound to a page that was not checked", ap.ID)
		}
		ap.Consumed = true
		return nil
	})
	return err
}

func (a *Approvals) matches(ap *Approval, use Use) error {
	digest, err := ActionDigest(use.Action)
	if err != nil {
		return errorf(InvalidInput, "the action cannot be digested: %v", err)
	}
	id := ap.ID
	switch {
	case ap.Revoked:
		return errorf(ApprovalStale, "approval %s was revoked", id)
	case ap.Consumed:
		return errorf(ApprovalStale, "approval %s was used already", id)
	case !a.now().Before(ap.Expires):
		return errorf(ApprovalStale, "approval %s expired", id)
	case ap.Actor != use.Actor || ap.Run != use.Run:
		return errorf(ApprovalStale, "approval %s is for another actor or run", id)
	case ap.URL != use.URL:
		return errorf(ApprovalStale, "approval %s is for another URL", id)
	case ap.ActionDigest != digest:
		return errorf(ApprovalStale, "approval %s is for another action", id)
	case ap.OperationID != "" && ap.OperationID != use.OperationID:
		return errorf(ApprovalStale, "approval %s is for another operation", id)
	case ap.SessionID != "" && ap.SessionID != use.SessionID:
		return errorf(ApprovalStale, "approval %s is for another session", id)
	case ap.PageDigest != "" && use.PageDigest != "" && ap.PageDigest != use.PageDigest:
		return errorf(ApprovalStale, "approval %s is for a page that changed since", id)
	}
	return nil
}

func (a *Approvals) change(ctx context.Context, id string, change func(*Approval) error) (*Approval, error) {
	kv, err := a.bucket(ctx)
	if err != nil {
		return nil, err
	}
	var ap Approval
	err = update(ctx, kv, approvalKey(id), &ap, func() error {
		if ap.ID == "" {
			return errorf(ApprovalRequired, "no approval %q: the host must approve this action", id)
		}
		return change(&ap)
	})
	var he *Error
	if err != nil && !errors.As(err, &he) {
		return nil, fmt.Errorf("approval store: %w", err)
	}
	if err != nil {
		return nil, err
	}
	return &ap, nil
}
