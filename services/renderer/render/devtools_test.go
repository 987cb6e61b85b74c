package render

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-rod/rod/lib/cdp"
)

// fakeChromium answers on the far end of a devtools pipe: a browser
// session per attachToBrowserTarget, a page session per attachToTarget
// (announced by Target.attachedToTarget on its opener's session first, as
// Chromium does), and Test.emit sends count Test.event events on the
// caller's session before it answers.
func fakeChromium(t *testing.T) *devtools {
	t.Helper()
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	d := newDevtools(cmdW, outR)
	var wg sync.WaitGroup
	t.Cleanup(func() {
		d.close()
		_ = cmdR.Close()
		_ = outW.Close()
		wg.Wait()
	})
	wg.Go(func() {
		br := bufio.NewReader(cmdR)
		write := func(v any) {
			b, _ := json.Marshal(v)
			_, _ = outW.Write(append(b, 0))
		}
		sessions := 0
		for {
			msg, err := br.ReadBytes(0)
			if err != nil {
				return
			}
			var req struct {
				ID        int64  `json:"id"`
				SessionID string `json:"sessionId"`
				Method    string `json:"method"`
				Params    struct {
					Count int `json:"count"`
				} `json:"params"`
			}
			if err := json.Unmarshal(msg[:len(msg)-1], &req); err != nil {
				t.Errorf("the pipe carried %q", msg)
				return
			}
			result := map[string]any{}
			switch req.Method {
			case "Target.attachToBrowserTarget", "Target.attachToTarget":
				sessions++
				id := fmt.Sprintf("S%d", sessions)
				if req.Method == "Target.attachToTarget" {
					write(map[string]any{"sessionId": req.SessionID, "method": "Target.attachedToTarget", "params": map[string]any{"sessionId": id}})
				}
				result["sessionId"] = id
			case "Test.emit":
				for i := range req.Params.Count {
					write(map[string]any{"sessionId": req.SessionID, "method": "Test.event", "params": map[string]any{"i": i}})
				}
			}
			write(map[string]any{"id": req.ID, "sessionId": req.SessionID, "result": result})
		}
	})
	return d
}

func nextEvent(t *testing.T, c *client) *cdp.Event {
	t.Helper()
	for {
		select {
		case e := <-c.Event():
			if e.Method == "Target.attachedToTarget" {
				continue
			}
			return e
		case <-time.After(10 * time.Second):
			t.Fatal("no event")
			return nil
		}
	}
}

// Renders share one pipe: each must get its own answers and events, and
// none may hold up the others.
func TestDevtoolsRoutesBySession(t *testing.T) {
	t.Parallel()
	d := fakeChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, err := d.attach(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.attach(ctx)
	if err != nil {
		t.Fatal(err)
	}

	res, err := a.Call(ctx, "", "Target.attachToTarget", nil)
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(res, &page)

	// b never reads its events: far more than any buffer would hold.
	if _, err := b.Call(ctx, "", "Test.emit", map[string]int{"count": 5000}); err != nil {
		t.Fatalf("a render that reads no events held up the pipe: %v", err)
	}

	if _, err := a.Call(ctx, page.SessionID, "Test.emit", map[string]int{"count": 1}); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, a); e.SessionID != page.SessionID || e.Method != "Test.event" {
		t.Fatalf("page event = %+v, want one on %s", e, page.SessionID)
	}
	if _, err := a.Call(ctx, "", "Test.emit", map[string]int{"count": 1}); err != nil {
		t.Fatal(err)
	}
	// To its rod.Browser, a render's browser session is the browser.
	if e := nextEvent(t, a); e.SessionID != "" || e.Method != "Test.event" {
		t.Fatalf("browser event = %+v, want one without a session", e)
	}
	select {
	case e := <-a.Event():
		t.Fatalf("a got an event it did not cause: %+v", e)
	default:
	}

	a.close()
	if _, ok := <-a.Event(); ok {
		// Drain what was queued; the channel must then close.
		for range a.Event() {
		}
	}
	if _, err := a.Call(ctx, "", "Test.emit", nil); err == nil {
		t.Fatal("a closed client still answered")
	}

	d.close()
	if _, err := b.Call(ctx, "", "Test.emit", nil); err == nil || ctx.Err() != nil {
		t.Fatalf("after the pipe broke: err %v, ctx %v; want an error at once", err, ctx.Err())
	}
}
