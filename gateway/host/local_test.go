package host

import (
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"distill.dev/gateway/app"
	"distill.dev/services/fetcher/jobs"
)

// The user's processes share one store in a folder: the first serves it,
// the others connect; when the one serving it ends, another takes it over
// at the same address, with every record, and every connection goes on.
func TestLocalStoreSharedAndTakenOver(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "host")
	logger := slog.New(slog.DiscardHandler)
	var mu sync.Mutex
	var served []net.Addr
	onListen := func(addr net.Addr) {
		mu.Lock()
		defer mu.Unlock()
		served = append(served, addr)
	}
	servedAt := func() []net.Addr {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(served)
	}
	a, err := OpenLocal(t.Context(), logger, LocalConfig{Dir: dir, OnListen: onListen})
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenLocal(t.Context(), logger, LocalConfig{Dir: dir, OnListen: onListen})
	if err != nil {
		a.Close()
		t.Fatal(err)
	}
	defer b.Close()
	if served := servedAt(); len(served) != 1 {
		a.Close()
		t.Fatalf("served at %v, want once, by the first", served)
	}
	if fi, err := os.Stat(filepath.Join(dir, localAddr)); err != nil || fi.Mode().Perm() != 0o600 {
		a.Close()
		t.Fatalf("the address file: %v, %v; want it the user's alone", fi, err)
	}

	jsA, storage, replicas := a.JetStream()
	jsB, _, _ := b.JetStream()
	approvalsA, approvalsB := NewApprovals(jsA, WithStorage(storage, replicas)), NewApprovals(jsB, WithStorage(storage, replicas))
	action := Action{Method: "click", Selector: "#go"}
	ap, err := approvalsA.Create(t.Context(), DefaultActor, "run-1", "https://docs.example.com/", action, time.Minute, Bindings{}, false)
	if err != nil {
		a.Close()
		t.Fatal(err)
	}
	use := Use{Actor: DefaultActor, Run: "run-1", URL: "https://docs.example.com/", Action: action}
	if _, err := approvalsB.Peek(t.Context(), ap.ID, use); err != nil {
		a.Close()
		t.Fatalf("the approval from the other process: %v", err)
	}

	a.Close()
	// b took the store over: the approval is still there, and used once.
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := approvalsB.Consume(t.Context(), ap.ID, use)
		if err == nil {
			break
		}
		if _, ok := CodeOf(err); ok || time.Now().After(deadline) {
			t.Fatalf("consuming after the takeover: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if served := servedAt(); len(served) != 2 || served[1].String() != served[0].String() {
		t.Fatalf("served at %v, want the same address twice", served)
	}
	c, err := OpenLocal(t.Context(), logger, LocalConfig{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	jsC, _, _ := c.JetStream()
	wantCode(t, NewApprovals(jsC, WithStorage(storage, replicas)).Consume(t.Context(), ap.ID, use), ApprovalStale)
}

// A folder that cannot be the store fails at once, in one line naming it.
func TestLocalStoreRefusesAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-folder")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := OpenLocal(t.Context(), slog.New(slog.DiscardHandler), LocalConfig{Dir: file})
	if err == nil || !strings.Contains(err.Error(), file) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("opening a file as the store: %v", err)
	}
}

// A process that serves the store runs one embedded NATS server: its job
// queue runs on the store's server, which serves the user's other
// processes until both the store and the queue let it go; only then is
// the store's folder free for another process to serve.
func TestLocalStoreIsTheProcessServer(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "host")
	logger := slog.New(slog.DiscardHandler)
	sys, err := app.Open(t.Context(), logger, app.Config{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			_ = sys.Close()
		}
	}()
	store, err := OpenLocal(t.Context(), logger, LocalConfig{Dir: dir, Server: sys.Embedded()})
	if err != nil {
		t.Fatal(err)
	}
	// The queue starts with the system's key-value store.
	if _, _, _, err := sys.KeyValue(); err != nil {
		t.Fatal(err)
	}
	a, err := readStoreAddr(dir)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(a.URL, nats.Token(a.Token))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Stream(t.Context(), jobs.JobsStream); err != nil {
		t.Fatalf("the job queue's stream is not on the server the store is served from: %v", err)
	}

	other := flock.New(filepath.Join(dir, localLock))
	store.Close()
	if held, err := other.TryLock(); err != nil || held {
		t.Fatalf("the store's folder was let go while its server still ran the queue (lock taken %v, err %v)", held, err)
	}
	if _, err := js.Stream(t.Context(), jobs.JobsStream); err != nil {
		t.Fatalf("the server went down while the queue ran on it: %v", err)
	}
	closed = true
	if err := sys.Close(); err != nil {
		t.Fatalf("closing distill: %v", err)
	}
	if held, err := other.TryLock(); err != nil || !held {
		t.Fatalf("the server is down and the store's folder is still held (lock taken %v, err %v)", held, err)
	}
	_ = other.Unlock()
}
