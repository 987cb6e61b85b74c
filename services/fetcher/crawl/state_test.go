package crawl

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

func TestStateFileDropsACutLastLine(t *testing.T) {
	name := filepath.Join(t.TempDir(), "crawl.state")
	s, err := OpenStateFile(name)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	recs := []Record{
		{Begin: &Begin{ID: "1", Fingerprint: "f", URL: "https://example.com/"}},
		{Start: &Entry{URL: "https://example.com/", Key: "example.com/"}},
		{Done: &Done{Key: "example.com/", Queued: []Entry{{URL: "https://example.com/a", Key: "example.com/a", Depth: 1, Seq: 2}}}},
	}
	for _, r := range recs {
		if err := s.Append(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	// A kill in the middle of a write leaves half a line.
	f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"start":{"url":"https://exa`)
	f.Close()

	got, err := s.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[2].Done == nil || got[2].Done.Queued[0].Key != "example.com/a" {
		t.Fatalf("loaded %+v, want the three whole records", got)
	}
	// What comes next is appended after the last whole record.
	if err := s.Append(t.Context(), Record{End: StopDone}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(name)
	if strings.Contains(string(b), "https://exa\"") || !strings.HasSuffix(string(b), "{\"end\":\"done\"}\n") || strings.Count(string(b), "\n") != 4 {
		t.Errorf("file after the cut line:\n%s", b)
	}
}

func TestStateFileRefusesWhatIsNotACrawl(t *testing.T) {
	name := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(name, []byte("my notes\n"), 0o644)
	s, err := OpenStateFile(name)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Load(t.Context()); err == nil || !strings.Contains(err.Error(), "line 1 is not a crawl's record") {
		t.Errorf("Load = %v, want a refusal naming the line", err)
	}
}

func TestFingerprintTellsCrawlsApart(t *testing.T) {
	base := Request{URL: "https://example.com/", Depth: 2, MaxPages: 50, Delay: 100 * time.Millisecond,
		Options: &distillv1.FetchOptions{Format: distillv1.Format_FORMAT_JSON}}
	same := base
	same.Options = &distillv1.FetchOptions{Format: distillv1.Format_FORMAT_JSON}
	if Fingerprint(base) != Fingerprint(same) {
		t.Errorf("one crawl, two fingerprints")
	}
	for name, change := range map[string]func(*Request){
		"depth":   func(r *Request) { r.Depth = 3 },
		"query":   func(r *Request) { r.Query = "x" },
		"scope":   func(r *Request) { r.Scope.PathPrefix = "/docs" },
		"options": func(r *Request) { r.Options = &distillv1.FetchOptions{Format: distillv1.Format_FORMAT_TEXT} },
	} {
		r := base
		change(&r)
		if Fingerprint(r) == Fingerprint(base) {
			t.Errorf("a crawl with another %s has the same fingerprint", name)
		}
	}
}

// records is a Journal in memory, as a file or a stream would hold it.
type records struct{ recs []Record }

func (r *records) Load(context.Context) ([]Record, error) { return r.recs, nil }
func (r *records) Append(_ context.Context, rec Record) error {
	r.recs = append(r.recs, rec)
	return nil
}

// TestResumeRebuildsTheFrontier replays a journal cut mid-crawl: pages
// done count against --max-pages and are not read again, links they
// queued wait, and the page in flight goes back to the queue.
func TestResumeRebuildsTheFrontier(t *testing.T) {
	c := New(nil, nil, nil)
	req := Request{URL: "https://example.com/", Depth: 2, MaxPages: 10, Concurrency: 1}
	j := &records{}
	job, err := c.Begin(t.Context(), req, j)
	if err != nil {
		t.Fatal(err)
	}
	e := func(path string) Entry {
		return Entry{URL: "https://example.com" + path, Key: "example.com" + path, Depth: 1}
	}
	start := j.recs[0].Begin.Start
	j.Append(t.Context(), Record{Start: &start})
	j.Append(t.Context(), Record{Done: &Done{Key: start.Key, Queued: []Entry{e("/a"), e("/b"), e("/c")}}})
	a, b := e("/a"), e("/b")
	j.Append(t.Context(), Record{Start: &a})
	j.Append(t.Context(), Record{Done: &Done{Key: a.Key, Final: "example.com/c"}}) // /a redirected to /c
	j.Append(t.Context(), Record{Start: &b})                                       // in flight when it died

	resumed, err := c.Begin(t.Context(), req, j)
	if err != nil {
		t.Fatal(err)
	}
	st := resumed.Status()
	if resumed.ID() != job.ID() || st.Done != 2 || st.Queued != 1 || !st.Resumed || st.Finished {
		t.Errorf("resumed %s: %+v; want job %s, 2 done, /b queued again", resumed.ID(), st, job.ID())
	}
	if next, _ := resumed.front.pop(); next.Key != "example.com/b" {
		t.Errorf("next page %s, want /b: /c was reached through /a's redirect", next.Key)
	}
	if resumed.started != 2 {
		t.Errorf("%d pages counted against --max-pages, want 2", resumed.started)
	}

	// The same journal under other flags is another crawl's.
	other := req
	other.Depth = 3
	if _, err := c.Begin(t.Context(), other, j); err == nil || !strings.Contains(err.Error(), "of another crawl") {
		t.Errorf("Begin with other flags = %v, want a refusal", err)
	}
	// A finished crawl starts nothing.
	j.Append(t.Context(), Record{End: StopDone})
	done, err := c.Begin(t.Context(), req, j)
	if err != nil || !done.Status().Finished {
		t.Fatalf("a finished journal: %v, %+v", err, done.Status())
	}
	if _, ok := done.next(t.Context()); ok {
		t.Errorf("a finished crawl started a page")
	}
}
