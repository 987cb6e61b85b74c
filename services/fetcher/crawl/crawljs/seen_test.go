package crawljs

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/crawl"
	"distill.dev/services/fetcher/pace"
	"distill.dev/services/fetcher/pipeline"
	"distill.dev/services/fetcher/robots"
)

// TestClaimsAreFirstComeAcrossConnections: of two pages claiming one URL
// from two connections (a redirect in one fetcher, the link itself in
// another), one wins; the loser is told the page is read elsewhere, and
// the winner claiming again (its item read again) still holds it.
func TestClaimsAreFirstComeAcrossConnections(t *testing.T) {
	s := startServer(t)
	job := crawl.NewID()
	a, b := &seen{js: connect(t, s)}, &seen{js: connect(t, s)}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		by := "example.test/direct"
		if i%2 == 1 {
			by = "example.test/moved"
		}
		st := a
		if i >= 4 {
			st = b
		}
		wg.Go(func() { errs[i] = st.claim(t.Context(), job, "example.test/direct", by) })
	}
	wg.Wait()
	won := map[bool]int{}
	for _, err := range errs {
		var elsewhere *crawl.AlreadyRead
		switch {
		case err == nil:
			won[true]++
		case errors.As(err, &elsewhere):
			won[false]++
		default:
			t.Fatalf("claim: %v", err)
		}
	}
	if won[true] != 4 || won[false] != 4 {
		t.Errorf("%d claims held and %d refused; want the 4 of the winning page held and the other 4 refused", won[true], won[false])
	}
	if err := b.forget(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	if err := a.claim(t.Context(), job, "example.test/direct", "example.test/other"); err != nil {
		t.Errorf("after the crawl was forgotten, a claim: %v", err)
	}
}

// TestRobotsReadOnceForEveryWorker: workers on three connections ask at
// once for a crawl's robots.txt: one reads it, the others wait for its
// copy; a reader that failed leaves it to the next; another crawl reads
// its own.
func TestRobotsReadOnceForEveryWorker(t *testing.T) {
	s := startServer(t)
	job := crawl.NewID()
	var reads atomic.Int32
	read := func(ctx context.Context) (*robots.Robots, error) {
		reads.Add(1)
		time.Sleep(50 * time.Millisecond)
		return robots.Parse([]byte("User-agent: *\nDisallow: /private\n")), nil
	}
	const robotsURL = "http://example.test/robots.txt"
	var wg sync.WaitGroup
	files := make([]*robots.Robots, 6)
	for i := range files {
		st := &seen{js: connect(t, s)}
		wg.Go(func() {
			f, err := st.robots(t.Context(), job, robotsURL, time.Minute, read)
			if err != nil {
				t.Error(err)
			}
			files[i] = f
		})
	}
	wg.Wait()
	if n := reads.Load(); n != 1 {
		t.Errorf("robots.txt read %d times, want once", n)
	}
	for i, f := range files {
		if f == nil || f.For("distill").Check(mustURL(t, "http://example.test/private/x")).Allowed {
			t.Errorf("worker %d got %v, not the file read", i, f)
		}
	}

	other := crawl.NewID()
	st := &seen{js: connect(t, s)}
	failed := errors.New("no answer")
	if _, err := st.robots(t.Context(), other, robotsURL, time.Minute, func(context.Context) (*robots.Robots, error) { return nil, failed }); !errors.Is(err, failed) {
		t.Fatalf("a failed read: %v", err)
	}
	if _, err := st.robots(t.Context(), other, robotsURL, time.Minute, read); err != nil {
		t.Fatal(err)
	}
	if n := reads.Load(); n != 2 {
		t.Errorf("robots.txt read %d times in all, want once per crawl after the failure", n)
	}
}

// TestUsedAnswersDrain: an answer its crawl journaled is let go, and its
// page asked for again is not read again; once the crawl is
// forgotten, nothing of its pages is left on the stream.
func TestUsedAnswersDrain(t *testing.T) {
	s := startServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	reader := &countingReader{}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = ServeWork(ctx, slog.New(slog.DiscardHandler), connect(t, s), reader, pace.NewLocal(), WorkConfig{Workers: 2, AckWait: 5 * time.Second})
	}()
	owner := connect(t, s)
	if err := EnsureWorkStreams(t.Context(), owner, Config{}); err != nil {
		t.Fatal(err)
	}
	wr := NewWorkReader(owner, 5*time.Second, Config{})
	id := crawl.NewID()
	work := crawl.Work{JobID: id, Key: "example.test/a", Start: "http://example.test/", ScopeURL: "http://example.test/", Interval: time.Millisecond}
	read := func() (*pipeline.Result, error) {
		rctx, rcancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer rcancel()
		return wr.Read(rctx, "http://example.test/a", &distillv1.FetchOptions{}, handed{work: work})
	}
	if _, err := read(); err != nil {
		t.Fatal(err)
	}
	wr.Used(id, work.Key)
	pages, err := owner.Stream(t.Context(), PagesStream)
	if err != nil {
		t.Fatal(err)
	}
	m, err := pages.GetLastMsgForSubject(t.Context(), pageSubject(id, work.Key))
	if err != nil || m.Header.Get(usedField) == "" || len(m.Data) != 0 {
		t.Fatalf("after Used, the page's subject holds %v (%v); want the marker alone", m, err)
	}
	if n := subjectCount(t, pages, PagePrefix+id+".*"); n != 1 {
		t.Errorf("%d messages left for the page, want the marker alone", n)
	}
	// Asked for again (a journal that lost the record), the page is not
	// read again.
	if _, err := read(); err == nil {
		t.Error("a page journaled already was answered again")
	}
	if n := reader.reads.Load(); n != 1 {
		t.Errorf("the page was read %d times, want once", n)
	}
	if err := Forget(t.Context(), owner, Config{}, id); err != nil {
		t.Fatal(err)
	}
	if n := subjectCount(t, pages, PagePrefix+id+".*"); n != 0 {
		t.Errorf("%d messages of the crawl's pages left once it was forgotten", n)
	}
	cancel()
	<-served
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func subjectCount(t *testing.T, s jetstream.Stream, filter string) uint64 {
	t.Helper()
	info, err := s.Info(t.Context(), jetstream.WithSubjectFilter(filter))
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, c := range info.State.Subjects {
		n += c
	}
	return n
}
