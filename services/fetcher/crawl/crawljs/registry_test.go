package crawljs

import (
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
