package crawljs

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"distill.dev/proto/failure"
)

type testJob struct {
	Status string `json:"status"`
	Done   int    `json:"done"`
	Cancel bool   `json:"cancel,omitempty"`
}

func testRegistry(t *testing.T, js jetstream.JetStream) *Registry[testJob] {
	t.Helper()
	r, err := NewRegistry[testJob](js, RegistryConfig{Name: "test", TTL: time.Hour, Storage: jetstream.MemoryStorage})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Two processes over one NATS see one registry: a job created by one is
// read, updated, watched, listed and forgotten by the other, and so are
// its items.
func TestRegistrySharedAcrossProcesses(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	a, b := testRegistry(t, connect(t, srv)), testRegistry(t, connect(t, srv))
	ctx := t.Context()
	if err := a.Create(ctx, "job-1", testJob{Status: "running"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Create(ctx, "job-1", testJob{}); failure.CodeOf(err) != failure.Conflict {
		t.Errorf("creating a job twice: %v, want Conflict", err)
	}
	for _, id := range []string{"job-2", "a b", ">", "*", ""} {
		if _, err := b.Get(ctx, id); failure.CodeOf(err) != failure.NotFound {
			t.Errorf("job %q: %v, want NotFound", id, err)
		}
	}
	changes, err := a.Watch(ctx, "job-1")
	if err != nil {
		t.Fatal(err)
	}
	if first := <-changes; first.Status != "running" {
		t.Errorf("the watch began with %+v", first)
	}
	for _, item := range []string{"one", "two", "three"} {
		if _, err := a.Append(ctx, "job-1", []byte(item)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Update(ctx, "job-1", func(j *testJob) bool { j.Done, j.Cancel = 3, true; return true }); err != nil {
		t.Fatal(err)
	}
	if got := <-changes; !got.Cancel || got.Done != 3 {
		t.Errorf("the watch saw %+v", got)
	}
	var items []string
	last, err := b.Items(ctx, "job-1", 0, func(_ uint64, item []byte) { items = append(items, string(item)) })
	if err != nil || len(items) != 3 || items[0] != "one" || items[2] != "three" {
		t.Fatalf("items %q (%v)", items, err)
	}
	items = nil
	if _, err := b.Items(ctx, "job-1", last, func(_ uint64, item []byte) { items = append(items, string(item)) }); err != nil || len(items) != 0 {
		t.Errorf("items after the last: %q (%v)", items, err)
	}
	list, err := b.List(ctx)
	if err != nil || len(list) != 1 || list[0].ID != "job-1" || list[0].Record.Done != 3 {
		t.Errorf("list %+v (%v)", list, err)
	}
	if err := b.Delete(ctx, "job-1"); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-changes; ok {
		t.Error("the watch of a forgotten job stayed open")
	}
	if _, err := a.Get(ctx, "job-1"); failure.CodeOf(err) != failure.NotFound {
		t.Errorf("a forgotten job: %v, want NotFound", err)
	}
	if _, err := a.Items(ctx, "job-1", 0, func(uint64, []byte) { t.Error("a forgotten job kept its items") }); err != nil {
		t.Fatal(err)
	}
}

func TestRegistryRefusesABadName(t *testing.T) {
	t.Parallel()
	if _, err := NewRegistry[testJob](nil, RegistryConfig{Name: "Bad.Name"}); err == nil {
		t.Error("a name with a dot was taken")
	}
}

// A job's items are read in order across the reader's batches, from any
// point, and no other job's items are among them.
func TestRegistryItemsSpanBatches(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	r := testRegistry(t, connect(t, srv))
	ctx := t.Context()
	const n = 2*itemsBatch + 7
	var seqs []uint64
	for i := range n {
		seq, err := r.Append(ctx, "job-1", []byte(strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, seq)
		if i%100 == 0 {
			if _, err := r.Append(ctx, "job-2", []byte("other")); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, from := range []int{0, itemsBatch + 3} {
		var after uint64
		if from > 0 {
			after = seqs[from-1]
		}
		var got []string
		last, err := r.Items(ctx, "job-1", after, func(_ uint64, item []byte) { got = append(got, string(item)) })
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n-from || last != seqs[n-1] {
			t.Fatalf("from item %d: read %d items up to %d, want %d up to %d", from, len(got), last, n-from, seqs[n-1])
		}
		for i, item := range got {
			if item != strconv.Itoa(from+i) {
				t.Fatalf("from item %d: item %d is %q, want %d", from, i, item, from+i)
			}
		}
	}
}

// A job's marks are kept beside its record, read by any process, and are
// not jobs: List passes them by, and a watch of the job does not see
// them. Put replaces a record, or registers a new one.
func TestRegistryMarksAreNotJobs(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	a, b := testRegistry(t, connect(t, srv)), testRegistry(t, connect(t, srv))
	ctx := t.Context()
	if err := a.Create(ctx, "job-1", testJob{Status: "running"}); err != nil {
		t.Fatal(err)
	}
	if v, err := b.Mark(ctx, "job-1", "sent"); err != nil || v != 0 {
		t.Errorf("a mark never set: %d (%v), want 0", v, err)
	}
	changes, err := b.Watch(ctx, "job-1")
	if err != nil {
		t.Fatal(err)
	}
	<-changes
	if err := a.SetMark(ctx, "job-1", "sent", 42); err != nil {
		t.Fatal(err)
	}
	if err := a.Put(ctx, "job-1", testJob{Status: "again"}); err != nil {
		t.Fatal(err)
	}
	if got := <-changes; got.Status != "again" {
		t.Errorf("the watch saw %+v after the mark and the put, want the put", got)
	}
	if v, err := b.Mark(ctx, "job-1", "sent"); err != nil || v != 42 {
		t.Errorf("the mark: %d (%v), want 42", v, err)
	}
	if err := b.Put(ctx, "job-2", testJob{Done: 1}); err != nil {
		t.Fatal(err)
	}
	list, err := b.List(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("list %+v (%v), want the two jobs", list, err)
	}
	for _, l := range list {
		if l.ID != "job-1" && l.ID != "job-2" {
			t.Errorf("listed %q, not a job", l.ID)
		}
	}
	if err := b.ClearMark(ctx, "job-1", "sent"); err != nil {
		t.Fatal(err)
	}
	if v, err := a.Mark(ctx, "job-1", "sent"); err != nil || v != 0 {
		t.Errorf("a cleared mark: %d (%v), want 0", v, err)
	}
}

// A registry whose jobs add no items has no items stream: it is made by
// the first Append.
func TestRegistryItemsStreamIsMadeByTheFirstItem(t *testing.T) {
	t.Parallel()
	js := connect(t, startServer(t))
	r := testRegistry(t, js)
	ctx := t.Context()
	if err := r.Create(ctx, "job-1", testJob{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Update(ctx, "job-1", func(j *testJob) bool { j.Done++; return true }); err != nil {
		t.Fatal(err)
	}
	if err := r.SetMark(ctx, "job-1", "sent", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := r.List(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Stream(ctx, "DISTILL_TEST_ITEMS"); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Fatalf("the items stream before any item: %v, want none", err)
	}
	if _, err := r.Append(ctx, "job-1", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Stream(ctx, "DISTILL_TEST_ITEMS"); err != nil {
		t.Fatalf("the items stream after an item: %v", err)
	}
}

// A key whose value is no record (written by something else, or damaged)
// does not keep List from the jobs that are.
func TestRegistryListSkipsWhatIsNoRecord(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	js := connect(t, srv)
	r := testRegistry(t, js)
	ctx := t.Context()
	if err := r.Create(ctx, "job-1", testJob{Status: "running"}); err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, "distill_test_jobs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "job-2", []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	listed, err := r.List(ctx)
	if err != nil {
		t.Fatalf("List with one damaged record: %v", err)
	}
	if len(listed) != 1 || listed[0].ID != "job-1" {
		t.Fatalf("listed %v, want job-1 alone", listed)
	}
}
