package crawljs

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"distill.dev/proto/failure"
	"distill.dev/services/fetcher/crawl"
	"distill.dev/services/platform/natsembed"
)

func startServer(t *testing.T) *natsembed.Server {
	t.Helper()
	s, err := natsembed.Start(natsembed.Config{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

// connect opens a connection of its own, as a separate process would.
func connect(t *testing.T, s *natsembed.Server) jetstream.JetStream {
	t.Helper()
	nc, err := s.Connect(t.Name())
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

func TestJournalIsReadBackByAnotherConnection(t *testing.T) {
	s := startServer(t)
	js := connect(t, s)
	if err := EnsureStream(t.Context(), js, Config{}); err != nil {
		t.Fatal(err)
	}
	id := crawl.NewID()
	j, err := NewJournal(js, id, "first", Config{})
	if err != nil {
		t.Fatal(err)
	}
	if recs, err := j.Load(t.Context()); err != nil || len(recs) != 0 {
		t.Fatalf("a new journal loads %v, %v", recs, err)
	}
	want := []crawl.Record{{Begin: &crawl.Begin{ID: id, Fingerprint: "f"}}}
	for i := range 700 { // more than one fetch's batch
		want = append(want, crawl.Record{Start: &crawl.Entry{Key: string(rune('a'+i%26)) + "/" + time.Duration(i).String()}})
	}
	for _, r := range want {
		if err := j.Append(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	// Another job's records stay its own.
	other, _ := NewJournal(js, crawl.NewID(), "other", Config{})
	other.Append(t.Context(), crawl.Record{End: "done"})

	// While the first holds the job's lease, nobody else may load it.
	again, err := NewJournal(connect(t, s), id, "second", Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := again.Load(t.Context()); failure.CodeOf(err) != failure.Conflict || !strings.Contains(err.Error(), "is running on first") {
		t.Fatalf("a second Load while the first holds the lease: %v, want a conflict naming the first", err)
	}
	j.Close()
	got, err := again.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || got[0].Begin.ID != id || got[700].Start.Key != want[700].Start.Key {
		t.Fatalf("loaded %d records, want %d in order", len(got), len(want))
	}
	defer again.Close()
	if _, err := NewJournal(js, "../x", "x", Config{}); err == nil {
		t.Errorf("a job id that is not one was taken")
	}
}

// TestPacerSpacesTurnsAcrossProcesses: workers on two connections (two
// processes) take turns on one host from the bucket; the turns are the
// interval apart (less half of it, for a loaded machine's timers),
// whoever asks.
func TestPacerSpacesTurnsAcrossProcesses(t *testing.T) {
	s := startServer(t)
	pacers := []*Pacer{NewPacer(connect(t, s), Config{Memory: true}), NewPacer(connect(t, s), Config{Memory: true})}
	const interval = 60 * time.Millisecond
	var mu sync.Mutex
	var times []time.Time
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if err := pacers[i%2].Turn(t.Context(), "example.com", interval); err != nil {
				t.Error(err)
				return
			}
			now := time.Now()
			pacers[i%2].Sent(t.Context(), "example.com", interval, now)
			mu.Lock()
			times = append(times, now)
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(times) != 8 {
		t.Fatalf("%d turns, want 8", len(times))
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	for i := 1; i < len(times); i++ {
		if gap := times[i].Sub(times[i-1]); gap < interval/2 {
			t.Errorf("turns %d and %d came %v apart, within %v", i-1, i, gap, interval)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := pacers[0].Turn(ctx, "example.com", time.Hour); err == nil {
		t.Errorf("a turn with an ended context returned nil")
	}
}

// TestPacerHoldsATurnUntilItsRequestIsOut: a turn taken in one process
// holds the host, however long its request takes to go out, until Sent
// says it went; the next turn, in another process, then comes an interval
// after the request, not after the turn.
func TestPacerHoldsATurnUntilItsRequestIsOut(t *testing.T) {
	s := startServer(t)
	a, b := NewPacer(connect(t, s), Config{Memory: true}), NewPacer(connect(t, s), Config{Memory: true})
	const interval = 20 * time.Millisecond
	if err := a.Turn(t.Context(), "example.com", interval); err != nil {
		t.Fatal(err)
	}
	got := make(chan time.Time, 1)
	go func() {
		if err := b.Turn(t.Context(), "example.com", interval); err != nil {
			t.Error(err)
		}
		got <- time.Now()
	}()
	// The request goes out late: well after its interval.
	time.Sleep(10 * interval)
	select {
	case <-got:
		t.Fatalf("the host was given again while its turn was held")
	default:
	}
	sent := time.Now()
	a.Sent(t.Context(), "example.com", interval, sent)
	if next := <-got; next.Sub(sent) < interval {
		t.Errorf("the next turn came %v after the request went out, within %v", next.Sub(sent), interval)
	}
	b.Sent(t.Context(), "example.com", interval, time.Time{})
}
