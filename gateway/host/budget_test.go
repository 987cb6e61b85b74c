package host

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"distill.dev/services/platform/natsembed"
)

// twoGateways returns two JetStream clients of one embedded server, each
// on its own connection, as two gateway processes would be.
func twoGateways(t *testing.T) (jetstream.JetStream, jetstream.JetStream) {
	t.Helper()
	srv, err := natsembed.Start(natsembed.Config{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	conn := func(name string) jetstream.JetStream {
		nc, err := srv.Connect(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		return js
	}
	return conn("gateway-1"), conn("gateway-2")
}

// clock is a test clock that moves only when told.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func wantCode(t *testing.T, err error, code Code) {
	t.Helper()
	if got, ok := CodeOf(err); !ok || got != code {
		t.Fatalf("error %v, want %s", err, code)
	}
}

func defaultBudget() Budget {
	return Budget{MaxSeconds: DefaultMaxSeconds, MaxSteps: DefaultMaxSteps, MaxBytes: DefaultMaxBytes, MaxConcurrent: DefaultMaxConcurrent}
}

func TestBudgetSteps(t *testing.T) {
	js1, js2 := twoGateways(t)
	g1, g2 := NewBudgets(js1), NewBudgets(js2)
	b := defaultBudget()
	b.MaxConcurrent = 64
	// 20 attempts on each gateway at once: exactly max_steps pass.
	var passed, refused atomic.Int32
	var wg sync.WaitGroup
	for i := range 40 {
		g := g1
		if i%2 == 1 {
			g = g2
		}
		wg.Go(func() {
			c, err := g.Begin(t.Context(), "team-a", "run-1", b)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.End(t.Context())
			switch err := c.Step(t.Context()); {
			case err == nil:
				passed.Add(1)
			default:
				if code, _ := CodeOf(err); code != BudgetExhausted {
					t.Error(err)
				}
				refused.Add(1)
			}
		})
	}
	wg.Wait()
	if passed.Load() != DefaultMaxSteps || refused.Load() != 40-DefaultMaxSteps {
		t.Fatalf("%d steps passed and %d were refused, want %d and %d", passed.Load(), refused.Load(), DefaultMaxSteps, 40-DefaultMaxSteps)
	}
	// Another run of the same actor has its own steps.
	c, err := g2.Begin(t.Context(), "team-a", "run-2", b)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Step(t.Context()); err != nil {
		t.Fatalf("a fresh run: %v", err)
	}
}

// Calls of three steps racing on two gateways for a run of 12: four whole
// calls pass, the others are refused before taking any; a call that took
// fewer than it reserved gives the rest back when it ends.
func TestBudgetReserveWholeCalls(t *testing.T) {
	js1, js2 := twoGateways(t)
	g1, g2 := NewBudgets(js1), NewBudgets(js2)
	b := defaultBudget()
	b.MaxConcurrent = 64
	var passed, refused atomic.Int32
	var wg sync.WaitGroup
	for i := range 10 {
		g := g1
		if i%2 == 1 {
			g = g2
		}
		wg.Go(func() {
			c, err := g.Begin(t.Context(), "team-a", "run-1", b)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.End(t.Context())
			if err := c.Reserve(t.Context(), 3); err != nil {
				if code, _ := CodeOf(err); code != BudgetExhausted {
					t.Error(err)
				}
				refused.Add(1)
				return
			}
			for range 3 {
				if err := c.Step(t.Context()); err != nil {
					t.Errorf("a reserved step: %v", err)
				}
			}
			passed.Add(1)
		})
	}
	wg.Wait()
	if passed.Load() != 4 || refused.Load() != 6 {
		t.Fatalf("%d calls passed and %d were refused, want 4 and 6", passed.Load(), refused.Load())
	}

	c, err := g1.Begin(t.Context(), "team-a", "run-2", b)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Reserve(t.Context(), 12); err != nil {
		t.Fatal(err)
	}
	if err := c.Step(t.Context()); err != nil {
		t.Fatal(err)
	}
	other, err := g2.Begin(t.Context(), "team-a", "run-2", b)
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, other.Step(t.Context()), BudgetExhausted)
	other.End(t.Context())
	if err := c.End(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Eleven came back: eleven more steps, then none.
	c, err = g2.Begin(t.Context(), "team-a", "run-2", b)
	if err != nil {
		t.Fatal(err)
	}
	defer c.End(t.Context())
	if err := c.Reserve(t.Context(), 11); err != nil {
		t.Fatalf("the steps given back: %v", err)
	}
	for range 11 {
		if err := c.Step(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	wantCode(t, c.Step(t.Context()), BudgetExhausted)
}

func TestBudgetConcurrencyAcrossGateways(t *testing.T) {
	js1, js2 := twoGateways(t)
	g1, g2 := NewBudgets(js1), NewBudgets(js2)
	b := defaultBudget() // max_concurrent 1
	c1, err := g1.Begin(t.Context(), "team-a", "run-1", b)
	if err != nil {
		t.Fatal(err)
	}
	// Per actor across runs: another run on another gateway waits its turn.
	_, err = g2.Begin(t.Context(), "team-a", "run-2", b)
	wantCode(t, err, BudgetExhausted)
	// Another actor is not held up.
	other, err := g2.Begin(t.Context(), "team-b", "run-1", b)
	if err != nil {
		t.Fatalf("another actor: %v", err)
	}
	other.End(t.Context())
	if err := c1.End(t.Context()); err != nil {
		t.Fatal(err)
	}
	c2, err := g2.Begin(t.Context(), "team-a", "run-2", b)
	if err != nil {
		t.Fatalf("after the slot was given back: %v", err)
	}
	c2.End(t.Context())
}

// A gateway that dies holding a slot does not hold it for ever.
func TestBudgetSlotLapses(t *testing.T) {
	js1, js2 := twoGateways(t)
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	g1, g2 := NewBudgets(js1, WithClock(clk.now)), NewBudgets(js2, WithClock(clk.now))
	b := defaultBudget()
	if _, err := g1.Begin(t.Context(), "team-a", "run-1", b); err != nil { // never ended
		t.Fatal(err)
	}
	_, err := g2.Begin(t.Context(), "team-a", "run-2", b)
	wantCode(t, err, BudgetExhausted)
	clk.add(b.Duration() + slotGrace)
	// run-2's clock started with its refused call, so a fresh run asks.
	if _, err := g2.Begin(t.Context(), "team-a", "run-3", b); err != nil {
		t.Fatalf("a lapsed slot still held: %v", err)
	}
}

func TestBudgetTime(t *testing.T) {
	js1, js2 := twoGateways(t)
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	g1, g2 := NewBudgets(js1, WithClock(clk.now)), NewBudgets(js2, WithClock(clk.now))
	b := defaultBudget()
	c, err := g1.Begin(t.Context(), "team-a", "run-1", b)
	if err != nil {
		t.Fatal(err)
	}
	if want := clk.now().Add(60 * time.Second); !c.Deadline().Equal(want) {
		t.Fatalf("deadline %v, want %v", c.Deadline(), want)
	}
	clk.add(59 * time.Second)
	if err := c.Step(t.Context()); err != nil {
		t.Fatalf("within the time: %v", err)
	}
	clk.add(time.Second)
	wantCode(t, c.Step(t.Context()), BudgetExhausted)
	c.End(t.Context())
	// The clock started at the run's first call, on the other gateway.
	_, err = g2.Begin(t.Context(), "team-a", "run-1", b)
	wantCode(t, err, BudgetExhausted)
}

func TestBudgetBytes(t *testing.T) {
	js1, js2 := twoGateways(t)
	g1, g2 := NewBudgets(js1), NewBudgets(js2)
	b := defaultBudget()
	b.MaxBytes = 1000
	b.MaxConcurrent = 2
	c1, err := g1.Begin(t.Context(), "team-a", "run-1", b)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := g2.Begin(t.Context(), "team-a", "run-1", b)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c1.Bytes(t.Context(), 700); err != nil || got != 700 {
		t.Fatalf("first reservation: %d, %v", got, err)
	}
	if got, err := c2.Bytes(t.Context(), 700); err != nil || got != 300 {
		t.Fatalf("second reservation: %d, %v; want the 300 left", got, err)
	}
	if err := c2.Return(t.Context(), 100); err != nil {
		t.Fatal(err)
	}
	if got, err := c1.Bytes(t.Context(), 500); err != nil || got != 100 {
		t.Fatalf("after a return: %d, %v; want 100", got, err)
	}
	_, err = c1.Bytes(t.Context(), 1)
	wantCode(t, err, BudgetExhausted)
}
