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
// operation. Consuming it is a compare-and-set, so it fires at most once
// across every gateway.
type Approval struct {
	ID           string    `json:"id"`
	Actor        string    `json:"actor"`
	Run          string    `json:"run"`
	URL          string    `json:"url"`
	ActionDigest string    `json:"action_digest"`
	Expires      time.Time `json:"expires"`
	OperationID  string    `json:"operation_id,omitempty"`
	Revoked      bool      `json:"revoked,omitempty"`
	Consumed     bool      `json:"consumed,omitempty"`
}

// Action is what act would dispatch; its digest binds an approval to it.
type Action struct {
	Method    string         `json:"method"`
	Selector  string         `json:"selector"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

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
func (a *Approvals) Create(ctx context.Context, actor, run, url string, action Action, ttl time.Duration, operationID string) (*Approval, error) {
	if ttl <= 0 {
		return nil, errorf(InvalidInput, "an approval needs a positive lifetime")
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
		Expires: a.now().Add(ttl), OperationID: operationID}
	b, _ := json.Marshal(ap)
	if _, err := kv.Create(ctx, approvalKey(ap.ID), b); err != nil {
		return nil, fmt.Errorf("approval store: %w", err)
	}
	return ap, nil
}

// Revoke withdraws an approval; consuming it afterwards is APPROVAL_STALE.
func (a *Approvals) Revoke(ctx context.Context, id string) error {
	return a.change(ctx, id, func(ap *Approval) error {
		ap.Revoked = true
		return nil
	})
}

// Consume uses the approval id for this actor, run, URL and action, once:
// immediately before dispatch. Anything that does not match, has expired,
// was revoked or was consumed already is APPROVAL_STALE; an id that names
// no approval is APPROVAL_REQUIRED.
func (a *Approvals) Consume(ctx context.Context, id, actor, run, url string, action Action, operationID string) error {
	digest, err := ActionDigest(action)
	if err != nil {
		return errorf(InvalidInput, "the action cannot be digested: %v", err)
	}
	now := a.now()
	return a.change(ctx, id, func(ap *Approval) error {
		switch {
		case ap.Revoked:
			return errorf(ApprovalStale, "approval %s was revoked", id)
		case ap.Consumed:
			return errorf(ApprovalStale, "approval %s was used already", id)
		case !now.Before(ap.Expires):
			return errorf(ApprovalStale, "approval %s expired", id)
		case ap.Actor != actor || ap.Run != run:
			return errorf(ApprovalStale, "approval %s is for another actor or run", id)
		case ap.URL != url:
			return errorf(ApprovalStale, "approval %s is for another URL", id)
		case ap.ActionDigest != digest:
			return errorf(ApprovalStale, "approval %s is for another action", id)
		case ap.OperationID != "" && ap.OperationID != operationID:
			return errorf(ApprovalStale, "approval %s is for another operation", id)
		}
		ap.Consumed = true
		return nil
	})
}

func (a *Approvals) change(ctx context.Context, id string, change func(*Approval) error) error {
	kv, err := a.bucket(ctx)
	if err != nil {
		return err
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
		return fmt.Errorf("approval store: %w", err)
	}
	return err
}
