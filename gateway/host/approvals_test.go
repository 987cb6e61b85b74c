package host

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var click = Action{Method: "click", Selector: "#buy"}

// One approval fires at most once across gateways, whatever the number of
// concurrent attempts.
func TestApprovalConsumedOnce(t *testing.T) {
	js1, js2 := twoGateways(t)
	g1, g2 := NewApprovals(js1), NewApprovals(js2)
	ap, err := g1.Create(t.Context(), "team-a", "run-1", "https://shop.example.com/cart", click, time.Minute, Bindings{}, false)
	if err != nil {
		t.Fatal(err)
	}
	var fired, stale atomic.Int32
	var wg sync.WaitGroup
	for i := range 20 {
		g := g1
		if i%2 == 1 {
			g = g2
		}
		wg.Go(func() {
			err := g.Consume(t.Context(), ap.ID, Use{Actor: "team-a", Run: "run-1", URL: "https://shop.example.com/cart", Action: click})
			if err == nil {
				fired.Add(1)
				return
			}
			if code, _ := CodeOf(err); code != ApprovalStale {
				t.Error(err)
			}
			stale.Add(1)
		})
	}
	wg.Wait()
	if fired.Load() != 1 || stale.Load() != 19 {
		t.Fatalf("fired %d times, stale %d; want 1 and 19", fired.Load(), stale.Load())
	}
}

func TestApprovalBindings(t *testing.T) {
	js1, js2 := twoGateways(t)
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	g1, g2 := NewApprovals(js1, WithClock(clk.now)), NewApprovals(js2, WithClock(clk.now))
	const u = "https://shop.example.com/cart"
	mk := func(b Bindings) *Approval {
		ap, err := g1.Create(t.Context(), "team-a", "run-1", u, click, time.Minute, b, false)
		if err != nil {
			t.Fatal(err)
		}
		return ap
	}
	tests := []struct {
		name       string
		actor, run string
		url        string
		action     Action
		use        Bindings
		bind       Bindings
		revoke     bool
		advance    time.Duration
		want       Code
	}{
		{name: "other actor", actor: "team-b", run: "run-1", url: u, action: click, want: ApprovalStale},
		{name: "other run", actor: "team-a", run: "run-2", url: u, action: click, want: ApprovalStale},
		{name: "other URL", actor: "team-a", run: "run-1", url: u + "?x=1", action: click, want: ApprovalStale},
		{name: "other action", actor: "team-a", run: "run-1", url: u, action: Action{Method: "click", Selector: "#delete"}, want: ApprovalStale},
		{name: "other operation", actor: "team-a", run: "run-1", url: u, action: click, bind: Bindings{OperationID: "op-1"}, use: Bindings{OperationID: "op-2"}, want: ApprovalStale},
		{name: "other session", actor: "team-a", run: "run-1", url: u, action: click, bind: Bindings{SessionID: "s-1"}, use: Bindings{SessionID: "s-2"}, want: ApprovalStale},
		{name: "page changed", actor: "team-a", run: "run-1", url: u, action: click, bind: Bindings{PageDigest: "aa"}, use: Bindings{PageDigest: "bb"}, want: ApprovalStale},
		{name: "page not checked", actor: "team-a", run: "run-1", url: u, action: click, bind: Bindings{PageDigest: "aa"}, want: ApprovalStale},
		{name: "other arguments", actor: "team-a", run: "run-1", url: u, action: Action{Method: "click", Selector: "#buy", Arguments: map[string]string{"x": "1"}}, want: ApprovalStale},
		{name: "revoked", actor: "team-a", run: "run-1", url: u, action: click, revoke: true, want: ApprovalStale},
		{name: "expired", actor: "team-a", run: "run-1", url: u, action: click, advance: time.Minute, want: ApprovalStale},
		{name: "bound operation", actor: "team-a", run: "run-1", url: u, action: click, bind: Bindings{OperationID: "op-1"}, use: Bindings{OperationID: "op-1"}},
		{name: "every binding", actor: "team-a", run: "run-1", url: u, action: click, bind: Bindings{OperationID: "op-1", SessionID: "s", PageDigest: "aa"}, use: Bindings{OperationID: "op-1", SessionID: "s", PageDigest: "aa"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ap := mk(tt.bind)
			if tt.revoke {
				if _, err := g2.Revoke(t.Context(), ap.ID); err != nil {
					t.Fatal(err)
				}
			}
			clk.add(tt.advance)
			use := Use{Actor: tt.actor, Run: tt.run, URL: tt.url, Action: tt.action, Bindings: tt.use}
			if _, err := g2.Peek(t.Context(), ap.ID, use); tt.want != "" && tt.name != "page not checked" {
				wantCode(t, err, tt.want)
			} else if err != nil {
				t.Fatalf("peek: %v", err)
			}
			err := g2.Consume(t.Context(), ap.ID, use)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantCode(t, err, tt.want)
		})
	}
	wantCode(t, g2.Consume(t.Context(), "never-made", Use{Actor: "team-a", Run: "run-1", URL: u, Action: click}), ApprovalRequired)
	_, err := g2.Peek(t.Context(), "never-made", Use{Actor: "team-a", Run: "run-1", URL: u, Action: click})
	wantCode(t, err, ApprovalRequired)
	if _, err := g1.Create(t.Context(), "team-a", "run-1", u, click, 25*time.Hour, Bindings{}, false); err == nil {
		t.Fatal("an approval for over a day was made")
	}
}
