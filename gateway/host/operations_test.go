package host

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"distill.dev/services/fetcher/pipeline"
)

// Starting a reserved operation is an atomic claim: of many attempts on
// two gateways exactly one wins, and none after it.
func TestOperationClaimIsAtomic(t *testing.T) {
	js1, js2 := twoGateways(t)
	g1, g2 := NewOperations(js1), NewOperations(js2)
	op, err := g1.Reserve(t.Context(), "team-a", "run-1")
	if err != nil {
		t.Fatal(err)
	}
	var won, lost atomic.Int32
	var wg sync.WaitGroup
	for i := range 20 {
		g := g1
		if i%2 == 1 {
			g = g2
		}
		wg.Go(func() {
			_, err := g.Claim(t.Context(), op.ID, "team-a", "run-1", "inspect", "https://docs.example.com/?token=x")
			if err == nil {
				won.Add(1)
				return
			}
			if code, _ := CodeOf(err); code != SessionUnknown {
				t.Error(err)
			}
			lost.Add(1)
		})
	}
	wg.Wait()
	if won.Load() != 1 || lost.Load() != 19 {
		t.Fatalf("%d claims won, %d lost; want 1 and 19", won.Load(), lost.Load())
	}
	got, err := g2.Get(t.Context(), op.ID)
	if err != nil || got.State != OpStarting || got.URL != "https://docs.example.com/?token=REDACTED" {
		t.Fatalf("record %+v, %v", got, err)
	}

	other, _ := g1.Reserve(t.Context(), "team-a", "run-1")
	_, err = g2.Claim(t.Context(), other.ID, "team-b", "run-1", "inspect", "https://docs.example.com/")
	wantCode(t, err, NotAuthorized)
	_, err = g2.Claim(t.Context(), "no-such-op", "team-a", "run-1", "inspect", "https://docs.example.com/")
	wantCode(t, err, SessionUnknown)
}

// Each call the engine runs leaves a durable record, closed with its
// error code when it failed.
func TestEngineRecordsOperations(t *testing.T) {
	r := newRig(t, "", "    budget: {max_steps: 2}")
	who := Who{Actor: DefaultActor, Run: "ops"}
	env := r.engine.Inspect(t.Context(), who, Input{URL: r.site.onURL + "/"})
	wantEnvelope(t, env, StatusOK, "")
	op, err := r.ops.Get(t.Context(), env.OperationID)
	if err != nil || op.State != OpClosed || op.ErrorCode != "" || op.Tool != "inspect" || op.Actor != DefaultActor || op.Run != "ops" {
		t.Fatalf("record %+v, %v", op, err)
	}
	env = r.engine.Inspect(t.Context(), who, Input{URL: r.site.onURL + "/"})
	wantEnvelope(t, env, StatusError, BudgetExhausted)
	op, err = r.ops.Get(t.Context(), env.OperationID)
	if err != nil || op.State != OpClosed || op.ErrorCode != BudgetExhausted {
		t.Fatalf("record of a refused call %+v, %v", op, err)
	}
}

// losingRecords loads pages while the operation store loses every record,
// as a store that failed would: no call can be closed.
type losingRecords struct {
	Pages
	kv jetstream.KeyValue
}

func (l losingRecords) Do(ctx context.Context, req pipeline.Request) (*pipeline.Result, error) {
	keys, err := l.kv.ListKeys(ctx)
	if err != nil {
		return nil, err
	}
	for k := range keys.Keys() {
		if err := l.kv.Purge(ctx, k); err != nil {
			return nil, err
		}
	}
	return l.Pages.Do(ctx, req)
}

// A call whose operation cannot be closed answers cleanup_pending, whatever
// it found, and keeps its slot of the actor's concurrency until the host
// reviews it (or the slot lapses).
func TestCleanupPendingHoldsTheSlot(t *testing.T) {
	r := newRig(t, "", "")
	kv, err := r.js.KeyValue(t.Context(), OperationBucket)
	if err != nil {
		// Made by the first recorded call.
		wantEnvelope(t, r.engine.Inspect(t.Context(), Who{Actor: DefaultActor, Run: "first"}, Input{URL: r.site.onURL}), StatusOK, "")
		if kv, err = r.js.KeyValue(t.Context(), OperationBucket); err != nil {
			t.Fatal(err)
		}
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	losing := NewEngine(logger, Fixed(r.policy), NewBudgets(r.js), losingRecords{Pages: r.sys, kv: kv},
		EngineConfig{AllowLocal: true, Operations: NewOperations(r.js)})
	env := losing.Inspect(t.Context(), Who{Actor: DefaultActor, Run: "lost"}, Input{URL: r.site.onURL})
	if env.Status != StatusCleanupPending || env.Error == nil || env.Error.Code != CleanupPending || env.Data != nil {
		b, _ := env.JSON()
		t.Fatalf("a call that could not be closed: %s", b)
	}
	// max_concurrent is 1: the slot is still held, for any run.
	wantEnvelope(t, r.engine.Inspect(t.Context(), Who{Actor: DefaultActor, Run: "next"}, Input{URL: r.site.onURL}), StatusError, BudgetExhausted)
}
