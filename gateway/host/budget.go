package host

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// BudgetBucket is the JetStream key-value bucket budgets live in: every
// gateway of a cluster reads and updates the same records, with
// compare-and-set, so an actor's limits hold across all of them.
const BudgetBucket = "distill_host_budgets"

// budgetTTL forgets a run (and an actor's slots) a day after its last
// change: a run id used again after that starts a fresh budget.
const budgetTTL = 24 * time.Hour

// slotGrace is how long past a run's time a slot outlives a gateway that
// died holding it.
const slotGrace = 30 * time.Second

// casAttempts bounds the retries of one update under contention.
const casAttempts = 64

// Budgets keeps runs' budgets and actors' slots in JetStream key-value.
type Budgets struct {
	js       jetstream.JetStream
	replicas int
	storage  jetstream.StorageType
	now      func() time.Time

	mu sync.Mutex
	kv jetstream.KeyValue
}

// BudgetsOption configures Budgets.
type BudgetsOption func(*Budgets)

// WithClock sets the clock (tests).
func WithClock(now func() time.Time) BudgetsOption { return func(b *Budgets) { b.now = now } }

// WithStorage sets the bucket's storage and replicas: memory for the
// single binary, file with replicas for a cluster.
func WithStorage(s jetstream.StorageType, replicas int) BudgetsOption {
	return func(b *Budgets) { b.storage, b.replicas = s, max(replicas, 1) }
}

// NewBudgets keeps budgets in js. The bucket is made on first use.
func NewBudgets(js jetstream.JetStream, opts ...BudgetsOption) *Budgets {
	b := &Budgets{js: js, replicas: 1, storage: jetstream.FileStorage, now: time.Now}
	for _, o := range opts {
		o(b)
	}
	return b
}

func (b *Budgets) bucket(ctx context.Context) (jetstream.KeyValue, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.kv != nil {
		return b.kv, nil
	}
	kv, err := b.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: BudgetBucket, History: 1, TTL: budgetTTL, Storage: b.storage, Replicas: b.replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("budget store: %w", err)
	}
	b.kv = kv
	return kv, nil
}

// runState is what a run has spent.
type runState struct {
	Started time.Time `json:"started"`
	Steps   int       `json:"steps"`
	Bytes   int       `json:"bytes"`
}

// slots are an actor's calls in flight, by call id, with when each lapses
// should its gateway never release it.
type slots struct {
	Held map[string]time.Time `json:"held"`
}

func runKey(actor, run string) string {
	return "run." + keyPart(actor) + "." + keyPart(run)
}

func slotKey(actor string) string { return "slots." + keyPart(actor) }

// keyPart spells any string in the characters a key may hold.
func keyPart(s string) string { return "k" + base64.RawURLEncoding.EncodeToString([]byte(s)) }

// Call is one call's hold on its run's budget and on a slot of its actor.
type Call struct {
	b        *Budgets
	kv       jetstream.KeyValue
	actor    string
	run      string
	id       string
	budget   Budget
	deadline time.Time
	// reserved are steps Reserve took for the call and it has not taken
	// yet; End gives back those it never takes.
	reserved int
}

// Deadline is when the run's time ends; each call is bounded by it.
func (c *Call) Deadline() time.Time { return c.deadline }

// Begin refuses a call whose run's time is spent or whose actor has
// max_concurrent calls in flight, and otherwise takes a slot, which End
// gives back. A run's clock starts at its first call.
func (b *Budgets) Begin(ctx context.Context, actor, run string, budget Budget) (*Call, error) {
	kv, err := b.bucket(ctx)
	if err != nil {
		return nil, err
	}
	now := b.now()
	var st runState
	if err := update(ctx, kv, runKey(actor, run), &st, func() error {
		if st.Started.IsZero() {
			st.Started = now
		}
		return nil
	}); err != nil {
		return nil, err
	}
	deadline := st.Started.Add(budget.Duration())
	if !now.Before(deadline) {
		return nil, errorf(BudgetExhausted, "the run's time budget of %ds is spent", budget.MaxSeconds)
	}
	c := &Call{b: b, kv: kv, actor: actor, run: run, id: newID(), budget: budget, deadline: deadline}
	var sl slots
	if err := update(ctx, kv, slotKey(actor), &sl, func() error {
		for id, lapse := range sl.Held {
			if !now.Before(lapse) {
				delete(sl.Held, id)
			}
		}
		if len(sl.Held) >= budget.MaxConcurrent {
			return errorf(BudgetExhausted, "%d of %d concurrent calls are in flight for this actor", len(sl.Held), budget.MaxConcurrent)
		}
		if sl.Held == nil {
			sl.Held = map[string]time.Time{}
		}
		sl.Held[c.id] = deadline.Add(slotGrace)
		return nil
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Reserve takes the n steps a call will take, all or none, before it does
// anything: calls racing for a run's last steps on several gateways are
// refused before they load a page they could not finish, so a run of
// max_steps gives whole calls, never halves.
func (c *Call) Reserve(ctx context.Context, n int) error {
	if n <= 0 {
		return nil
	}
	var st runState
	if err := update(ctx, c.kv, runKey(c.actor, c.run), &st, func() error {
		if left := c.budget.MaxSteps - st.Steps; left < n {
			return errorf(BudgetExhausted, "the run has %d of its %d steps left and this call takes %d", max(left, 0), c.budget.MaxSteps, n)
		}
		st.Steps += n
		return nil
	}); err != nil {
		return err
	}
	c.reserved = n
	return nil
}

// Step counts one navigation, observation, extraction or action against
// the run, refusing it when the steps or the time are spent. A step
// Reserve took is counted already.
func (c *Call) Step(ctx context.Context) error {
	if !c.b.now().Before(c.deadline) {
		return errorf(BudgetExhausted, "the run's time budget of %ds is spent", c.budget.MaxSeconds)
	}
	if c.reserved > 0 {
		c.reserved--
		return nil
	}
	var st runState
	return update(ctx, c.kv, runKey(c.actor, c.run), &st, func() error {
		if st.Steps >= c.budget.MaxSteps {
			return errorf(BudgetExhausted, "the run's %d steps are spent", c.budget.MaxSteps)
		}
		st.Steps++
		return nil
	})
}

// Bytes reserves up to n bytes of retained result data and returns how
// many it got: the rest of the run's bytes when fewer than n are left. A
// run with none left is refused.
func (c *Call) Bytes(ctx context.Context, n int) (int, error) {
	var st runState
	got := 0
	err := update(ctx, c.kv, runKey(c.actor, c.run), &st, func() error {
		left := c.budget.MaxBytes - st.Bytes
		if left <= 0 {
			return errorf(BudgetExhausted, "the run's %d bytes are spent", c.budget.MaxBytes)
		}
		got = min(n, left)
		st.Bytes += got
		return nil
	})
	return got, err
}

// Return gives back bytes reserved but not kept.
func (c *Call) Return(ctx context.Context, n int) error {
	if n <= 0 {
		return nil
	}
	var st runState
	return update(ctx, c.kv, runKey(c.actor, c.run), &st, func() error {
		st.Bytes = max(st.Bytes-n, 0)
		return nil
	})
}

// End gives the call's slot back, and the steps it reserved but never
// took (a page that failed to load is never observed). It runs even when
// the call's context has ended.
func (c *Call) End(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	var sl slots
	return errors.Join(c.returnSteps(ctx), update(ctx, c.kv, slotKey(c.actor), &sl, func() error {
		delete(sl.Held, c.id)
		return nil
	}))
}

// Keep gives back the steps the call never took but keeps its slot until
// it lapses: a call whose effects are unknown holds it, as one whose
// cleanup is pending does, until the host has had time to look.
func (c *Call) Keep(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return c.returnSteps(ctx)
}

func (c *Call) returnSteps(ctx context.Context) error {
	n := c.reserved
	if n <= 0 {
		return nil
	}
	var st runState
	if err := update(ctx, c.kv, runKey(c.actor, c.run), &st, func() error {
		st.Steps = max(st.Steps-n, 0)
		return nil
	}); err != nil {
		return err
	}
	c.reserved = 0
	return nil
}

// update reads key into v, lets change alter it and writes it back if the
// record did not change in between, retrying from a fresh read if it did.
// An error from change is returned as it is, and nothing is written.
func update[T any](ctx context.Context, kv jetstream.KeyValue, key string, v *T, change func() error) error {
	for range casAttempts {
		var zero T
		*v = zero
		var rev uint64
		e, err := kv.Get(ctx, key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
		case err != nil:
			return fmt.Errorf("budget store: %w", err)
		default:
			rev = e.Revision()
			if err := json.Unmarshal(e.Value(), v); err != nil {
				return fmt.Errorf("budget store: record %s: %w", key, err)
			}
		}
		if err := change(); err != nil {
			return err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if rev == 0 {
			_, err = kv.Create(ctx, key, b)
		} else {
			_, err = kv.Update(ctx, key, b, rev)
		}
		if err == nil {
			return nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) && !isWrongSequence(err) {
			return fmt.Errorf("budget store: %w", err)
		}
	}
	return fmt.Errorf("budget store: %s kept changing under %d attempts", key, casAttempts)
}

// isWrongSequence is the answer to an Update whose revision is stale.
func isWrongSequence(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
