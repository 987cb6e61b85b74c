package host

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var buy = ActInput{Method: ActClick, Selector: "#buy", Description: "order the widget"}

// approve creates an approval that consents to the action's form
// submissions.
func (r *rig) approve(t *testing.T, who Who, url string, in ActInput, b Bindings) string {
	t.Helper()
	ap, err := r.approvals.Create(t.Context(), who.Actor, who.Run, url, Action{Method: in.Method, Selector: in.Selector, Arguments: in.Arguments}, time.Minute, b, true)
	if err != nil {
		t.Fatal(err)
	}
	return ap.ID
}

// act in real Chromium: nothing is dispatched without the host's approval,
// an approval fires once, and what it was bound to must still hold.
func TestAct(t *testing.T) {
	r := newRig(t, "", "    budget: {max_steps: 40, max_concurrent: 4}")
	shop := r.site.onURL + "/shop"
	who := Who{Actor: DefaultActor, Run: "act-1", Session: "s-1"}
	act := func(in ActInput) *Envelope { in.URL = shop; return r.engine.Act(t.Context(), who, in) }

	wantEnvelope(t, act(buy), StatusError, ApprovalRequired)
	in := buy
	in.ApprovalID = "never-made"
	wantEnvelope(t, act(in), StatusError, ApprovalRequired)
	// An approval of another action does not stretch to this one.
	in.ApprovalID = r.approve(t, who, shop, ActInput{Method: ActClick, Selector: "#other"}, Bindings{})
	wantEnvelope(t, act(in), StatusError, ApprovalStale)
	// The filter refuses before any approval is read.
	del := ActInput{Method: ActClick, Selector: "#delete-account"}
	del.ApprovalID = r.approve(t, who, shop, del, Bindings{})
	wantEnvelope(t, act(del), StatusError, NotAuthorized)
	bad := ActInput{Method: "hover", Selector: "#buy", ApprovalID: in.ApprovalID}
	wantEnvelope(t, act(bad), StatusError, InvalidInput)
	if n := r.site.orders.Load(); n != 0 {
		t.Fatalf("%d orders placed without an approval", n)
	}

	// An approval without the host's consent to submissions: the order's
	// POST is withheld, and the approval spent.
	ap, err := r.approvals.Create(t.Context(), who.Actor, who.Run, shop, Action{Method: ActClick, Selector: "#buy"}, time.Minute, Bindings{}, false)
	if err != nil {
		t.Fatal(err)
	}
	in.ApprovalID = ap.ID
	env := act(in)
	wantEnvelope(t, env, StatusError, ApprovalRequired)
	if !strings.Contains(env.Error.Message, "POST") || r.site.orders.Load() != 0 {
		t.Fatalf("without consent: %s, %d orders", env.Error.Message, r.site.orders.Load())
	}
	wantEnvelope(t, act(in), StatusError, ApprovalStale)

	in.ApprovalID = r.approve(t, who, shop, buy, Bindings{SessionID: "s-1"})
	env = act(in)
	wantEnvelope(t, env, StatusOK, "")
	if got := env.Data.(map[string]any)["title"]; got != "Thanks" || r.site.orders.Load() != 1 {
		t.Fatalf("after the click: title %v, %d orders", got, r.site.orders.Load())
	}
	op, err := r.ops.Get(t.Context(), env.OperationID)
	if err != nil || op.State != OpClosed || op.Tool != "act" {
		t.Fatalf("operation %+v, %v", op, err)
	}
	// Once.
	wantEnvelope(t, act(in), StatusError, ApprovalStale)

	// Bound to the page's candidates: they must be what inspect showed.
	page := r.engine.Inspect(t.Context(), who, Input{URL: shop})
	wantEnvelope(t, page, StatusOK, "")
	in.ApprovalID = r.approve(t, who, shop, buy, Bindings{PageDigest: page.Digest})
	wantEnvelope(t, act(in), StatusOK, "")
	in.ApprovalID = r.approve(t, who, shop, buy, Bindings{PageDigest: "0000"})
	wantEnvelope(t, act(in), StatusError, ApprovalStale)
	// Bound to another client session.
	in.ApprovalID = r.approve(t, who, shop, buy, Bindings{SessionID: "s-2"})
	wantEnvelope(t, act(in), StatusError, ApprovalStale)
	if n := r.site.orders.Load(); n != 2 {
		t.Fatalf("%d orders, want 2", n)
	}

	// A selector that matches nothing, once dispatched, leaves the effects
	// unknown, and the operation says so.
	miss := ActInput{Method: ActClick, Selector: "#gone"}
	miss.ApprovalID = r.approve(t, who, shop, miss, Bindings{})
	env = act(miss)
	if env.Status != StatusUnknown || env.Error == nil {
		b, _ := env.JSON()
		t.Fatalf("a failed dispatch: %s", b)
	}
	if op, err := r.ops.Get(t.Context(), env.OperationID); err != nil || op.State != OpUnknown || op.ErrorCode == "" {
		t.Fatalf("operation %+v, %v", op, err)
	}
	// Its slot stays held until it lapses: three more calls take the
	// other three of max_concurrent 4 (held at the page), the fourth is
	// refused.
	release := make(chan struct{})
	r.site.hold(release)
	results := make(chan *Envelope, 3)
	for i := range 3 {
		go func() {
			results <- r.engine.Inspect(t.Context(), Who{Actor: DefaultActor, Run: fmt.Sprintf("held-%d", i)}, Input{URL: fmt.Sprintf("%s/held?i=%d", r.site.onURL, i)})
		}()
	}
	for deadline := time.Now().Add(30 * time.Second); r.site.heldHits() < 3; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			close(release)
			t.Fatal("the held calls never reached the page")
		}
	}
	wantEnvelope(t, r.engine.Inspect(t.Context(), Who{Actor: DefaultActor, Run: "after-unknown"}, Input{URL: r.site.onURL}), StatusError, BudgetExhausted)
	close(release)
	for range 3 {
		wantEnvelope(t, <-results, StatusOK, "")
	}
}

// One approval, many concurrent acts on two gateways' stores: it fires
// once.
func TestActApprovalFiresOnce(t *testing.T) {
	r := newRig(t, "", "    budget: {max_steps: 40, max_concurrent: 8}")
	shop := r.site.onURL + "/shop"
	who := Who{Actor: DefaultActor, Run: "act-once"}
	in := buy
	in.URL = shop
	in.ApprovalID = r.approve(t, who, shop, buy, Bindings{})
	var ok, stale atomic.Int32
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			env := r.engine.Act(t.Context(), who, in)
			switch {
			case env.Status == StatusOK:
				ok.Add(1)
			case env.Error != nil && env.Error.Code == ApprovalStale:
				stale.Add(1)
			default:
				b, _ := env.JSON()
				t.Errorf("an act: %s", b)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 1 || stale.Load() != 3 || r.site.orders.Load() != 1 {
		t.Fatalf("%d ok, %d stale, %d orders; want 1, 3, 1", ok.Load(), stale.Load(), r.site.orders.Load())
	}
}

func TestActReservedOperation(t *testing.T) {
	r := newRig(t, "", "    budget: {max_steps: 40}")
	shop := r.site.onURL + "/shop"
	who := Who{Actor: DefaultActor, Run: "act-op"}
	rec, err := r.ops.Reserve(t.Context(), who.Actor, who.Run)
	if err != nil {
		t.Fatal(err)
	}
	in := buy
	in.URL, in.OperationID = shop, rec.ID
	in.ApprovalID = r.approve(t, who, shop, buy, Bindings{OperationID: rec.ID})
	env := r.engine.Act(t.Context(), who, in)
	wantEnvelope(t, env, StatusOK, "")
	if env.OperationID != rec.ID {
		t.Fatalf("operation %s, reserved %s", env.OperationID, rec.ID)
	}
	// Starting it again is no retry.
	in.ApprovalID = r.approve(t, who, shop, buy, Bindings{})
	wantEnvelope(t, r.engine.Act(t.Context(), who, in), StatusError, SessionUnknown)
	// A read-only tool claims one too; another run's is not its own.
	rec, _ = r.ops.Reserve(t.Context(), who.Actor, "someone-else")
	wantEnvelope(t, r.engine.Inspect(t.Context(), who, Input{URL: shop, OperationID: rec.ID}), StatusError, NotAuthorized)
	rec, _ = r.ops.Reserve(t.Context(), who.Actor, who.Run)
	env = r.engine.Inspect(t.Context(), who, Input{URL: shop, OperationID: rec.ID})
	wantEnvelope(t, env, StatusOK, "")
	if env.OperationID != rec.ID {
		t.Fatalf("operation %s, reserved %s", env.OperationID, rec.ID)
	}
}
