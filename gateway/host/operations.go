package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// OperationBucket keeps operations, the durable record of each host-mode
// call, so that a host can review what a call did after a gateway crashed.
const OperationBucket = "distill_host_operations"

// operationTTL keeps a record a week after its last change.
const operationTTL = 7 * 24 * time.Hour

// Operation states. reserved -> starting -> active -> closed; a call whose
// effects cannot be known ends unknown, one whose cleanup failed
// cleanup_pending, each with an error code.
const (
	OpReserved       = "reserved"
	OpStarting       = "starting"
	OpActive         = "active"
	OpClosed         = "closed"
	OpUnknown        = "unknown"
	OpCleanupPending = "cleanup_pending"
)

// Operation is one record.
type Operation struct {
	ID        string    `json:"id"`
	Actor     string    `json:"actor"`
	Run       string    `json:"run"`
	Tool      string    `json:"tool,omitempty"`
	URL       string    `json:"url,omitempty"` // redacted
	State     string    `json:"state"`
	ErrorCode Code      `json:"error_code,omitempty"`
	Created   time.Time `json:"created"`
	Updated   time.Time `json:"updated"`
}

// Operations keeps operations in JetStream key-value.
type Operations struct {
	js       jetstream.JetStream
	storage  jetstream.StorageType
	replicas int
	now      func() time.Time

	mu sync.Mutex
	kv jetstream.KeyValue
}

// NewOperations keeps operations in js, with the storage and replicas of
// the budgets (WithStorage, WithClock apply).
func NewOperations(js jetstream.JetStream, opts ...BudgetsOption) *Operations {
	b := NewBudgets(js, opts...)
	return &Operations{js: js, storage: b.storage, replicas: b.replicas, now: b.now}
}

func (o *Operations) bucket(ctx context.Context) (jetstream.KeyValue, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.kv != nil {
		return o.kv, nil
	}
	kv, err := o.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: OperationBucket, History: 1, TTL: operationTTL, Storage: o.storage, Replicas: o.replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("operation store: %w", err)
	}
	o.kv = kv
	return kv, nil
}

func opKey(id string) string { return "op." + keyPart(id) }

// Reserve records a new operation for actor and run, for the host to hand
// to a later call.
func (o *Operations) Reserve(ctx context.Context, actor, run string) (*Operation, error) {
	return o.create(ctx, actor, run, OpReserved)
}

func (o *Operations) create(ctx context.Context, actor, run, state string) (*Operation, error) {
	kv, err := o.bucket(ctx)
	if err != nil {
		return nil, err
	}
	now := o.now()
	op := &Operation{ID: newID(), Actor: actor, Run: run, State: state, Created: now, Updated: now}
	b, _ := json.Marshal(op)
	if _, err := kv.Create(ctx, opKey(op.ID), b); err != nil {
		return nil, fmt.Errorf("operation store: %w", err)
	}
	return op, nil
}

// Get reads an operation.
func (o *Operations) Get(ctx context.Context, id string) (*Operation, error) {
	kv, err := o.bucket(ctx)
	if err != nil {
		return nil, err
	}
	e, err := kv.Get(ctx, opKey(id))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, errorf(SessionUnknown, "no operation %q", id)
	}
	if err != nil {
		return nil, fmt.Errorf("operation store: %w", err)
	}
	var op Operation
	if err := json.Unmarshal(e.Value(), &op); err != nil {
		return nil, fmt.Errorf("operation store: %w", err)
	}
	return &op, nil
}

// Claim starts a reserved operation for the same actor and run: an atomic
// reserved -> starting, which only one caller on any gateway wins. It is
// no resume or retry: an operation past reserved is refused.
func (o *Operations) Claim(ctx context.Context, id, actor, run, tool, url string) (*Operation, error) {
	return o.move(ctx, id, func(op *Operation) error {
		if op.Actor != actor || op.Run != run {
			return errorf(NotAuthorized, "operation %s is not this actor's and run's", id)
		}
		if op.State != OpReserved {
			return errorf(SessionUnknown, "operation %s is %s, not reserved: it cannot be started again", id, op.State)
		}
		op.State, op.Tool, op.URL = OpStarting, tool, RedactURL(url)
		return nil
	})
}

// Begin records a call that was not reserved, already starting.
func (o *Operations) Begin(ctx context.Context, actor, run, tool, url string) (*Operation, error) {
	op, err := o.create(ctx, actor, run, OpStarting)
	if err != nil {
		return nil, err
	}
	return o.move(ctx, op.ID, func(op *Operation) error {
		op.Tool, op.URL = tool, RedactURL(url)
		return nil
	})
}

// Activate marks a starting operation active: it is reaching the network.
func (o *Operations) Activate(ctx context.Context, id string) error {
	_, err := o.move(ctx, id, func(op *Operation) error {
		if op.State != OpStarting {
			return fmt.Errorf("operation %s is %s, not starting", id, op.State)
		}
		op.State = OpActive
		return nil
	})
	return err
}

// End closes an operation, with the error code of a failed call. The
// record is written even when ctx has ended.
func (o *Operations) End(ctx context.Context, id, state string, code Code) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, err := o.move(ctx, id, func(op *Operation) error {
		op.State, op.ErrorCode = state, code
		return nil
	})
	return err
}

// move changes an operation with compare-and-set.
func (o *Operations) move(ctx context.Context, id string, change func(*Operation) error) (*Operation, error) {
	kv, err := o.bucket(ctx)
	if err != nil {
		return nil, err
	}
	var op Operation
	err = update(ctx, kv, opKey(id), &op, func() error {
		if op.ID == "" {
			return errorf(SessionUnknown, "no operation %q", id)
		}
		if err := change(&op); err != nil {
			return err
		}
		op.Updated = o.now()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &op, nil
}
