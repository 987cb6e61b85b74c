package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"distill.dev/services/platform/natsembed"
)

// The files of a local store's directory.
const (
	// localLock is held, with flock, by the process serving the store.
	localLock = "lock"
	// localAddr says where the store is served and the token it asks
	// for; only the user may read it.
	localAddr = "nats.json"
	// localJetStream is the store itself.
	localJetStream = "jetstream"
)

// localOpenWait bounds how long a process waits for the one holding the
// store to serve it.
const localOpenWait = 15 * time.Second

// LocalStore is host mode's shared state on one machine without a
// cluster: budgets, operations and approvals in JetStream, kept on disk in
// a directory of the user's, so that every distill process of the user
// (an MCP server over stdio, distill host approving an action for it, a
// second MCP client's server) sees the same records, and they outlive a
// crash. The first process to open the directory serves it, with an
// embedded NATS server on loopback that asks for a token only the user
// can read; the others connect to it. When that process ends, one of the
// others takes the store over at the same address, and every connection
// finds it again.
type LocalStore struct {
	logger *slog.Logger
	dir    string
	lock   *flock.Flock
	// onListen is told each address this process serves the store at:
	// one of its own ports, which no fetch may reach.
	onListen func(net.Addr)
	// shared is the process's embedded server, which serves the store
	// when nothing started it before; nil: the store starts its own.
	shared *natsembed.Shared

	mu sync.Mutex
	// release, while this process serves the store, lets its server go,
	// then runs its argument: the store's lock is given up once the
	// server is down.
	release func(after func())
	closed  bool

	nc *nats.Conn
	js jetstream.JetStream
}

// storeAddr is the content of the address file.
type storeAddr struct {
	URL   string `json:"url"`
	Token string `json:"token"`
}

// LocalConfig says where a LocalStore lives and how this process serves
// it.
type LocalConfig struct {
	// Dir is the user's host state folder.
	Dir string
	// OnListen, when set, is told where this process serves the store.
	OnListen func(net.Addr)
	// Server is the process's one embedded NATS server (app.System's
	// Embedded): when nothing started it yet, the store is served from
	// it, and the process's job queue runs there too. Nil, or started
	// already: the store is served by a server of its own.
	Server *natsembed.Shared
}

// OpenLocal opens the store in cfg.Dir, serving it or connecting to the
// process that does.
func OpenLocal(ctx context.Context, logger *slog.Logger, cfg LocalConfig) (*LocalStore, error) {
	dir := cfg.Dir
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("host state %s: %w", dir, err)
	}
	s := &LocalStore{logger: logger, dir: dir, lock: flock.New(filepath.Join(dir, localLock)), onListen: cfg.OnListen, shared: cfg.Server}
	ctx, cancel := context.WithTimeout(ctx, localOpenWait)
	defer cancel()
	for {
		held, err := s.lock.TryLock()
		if err != nil {
			return nil, fmt.Errorf("host state %s: lock: %w", dir, err)
		}
		if held {
			s.mu.Lock()
			err := s.serve()
			s.mu.Unlock()
			if err != nil {
				_ = s.lock.Unlock()
				return nil, err
			}
		}
		// Served here or by another process, the store is reached the
		// same way, over loopback: a connection that outlives the process
		// serving it.
		a, err := readStoreAddr(dir)
		if err == nil {
			err = s.connect(a)
		}
		switch {
		case err == nil:
			return s, nil
		case held:
			s.Close()
			return nil, err
		}
		// The process holding the store is still starting to serve it.
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("host state %s: another process holds it and does not serve it (%s)", dir, filepath.Join(dir, localAddr))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// serve starts the embedded server on the store, at the address and with
// the token of the last process that served it when it can (connections
// of other processes are still trying that address), or else on a free
// port with a new token. s.mu is held, and so is the lock.
func (s *LocalStore) serve() error {
	store := filepath.Join(s.dir, localJetStream)
	var srv *natsembed.Server
	a, err := readStoreAddr(s.dir)
	if err == nil {
		srv, err = s.start(natsembed.Config{StoreDir: store, Listen: strings.TrimPrefix(a.URL, "nats://"), Token: a.Token})
		if err != nil {
			s.logger.Info("host state: the last address cannot be served again; serving on another", "url", a.URL, "err", err.Error())
		}
	}
	if srv == nil {
		a.Token = newToken()
		if srv, err = s.start(natsembed.Config{StoreDir: store, Listen: "127.0.0.1:0", Token: a.Token}); err != nil {
			return fmt.Errorf("host state %s: %w", s.dir, err)
		}
	}
	a.URL = "nats://" + srv.Addr().String()
	if err := writeStoreAddr(s.dir, a); err != nil {
		s.release(func() {})
		s.release = nil
		return err
	}
	if s.onListen != nil {
		s.onListen(srv.Addr())
	}
	s.logger.Debug("host state served", "dir", s.dir, "url", a.URL)
	return nil
}

// start starts a server as cfg says: the process's own when nothing
// started it yet, else one for the store alone. It sets s.release.
func (s *LocalStore) start(cfg natsembed.Config) (*natsembed.Server, error) {
	if s.shared != nil {
		srv, started, err := s.shared.Start(cfg)
		if err != nil {
			return nil, err
		}
		if started {
			s.release = s.shared.Release
			return srv, nil
		}
		// The process's server runs already, on a folder of its own.
	}
	srv, err := natsembed.Start(cfg)
	if err != nil {
		return nil, err
	}
	s.release = func(after func()) {
		srv.Shutdown()
		after()
	}
	return srv, nil
}

func (s *LocalStore) connect(a storeAddr) error {
	nc, err := nats.Connect(a.URL, nats.Token(a.Token), nats.Name("distill host state"),
		nats.Timeout(2*time.Second), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond),
		nats.DisconnectErrHandler(func(*nats.Conn, error) { go s.takeOver() }))
	if err != nil {
		return fmt.Errorf("host state %s: %w", s.dir, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return fmt.Errorf("host state %s: %w", s.dir, err)
	}
	s.mu.Lock()
	s.nc, s.js = nc, js
	s.mu.Unlock()
	return nil
}

// takeOver serves the store when the process that served it has ended,
// at its address, which this process's connection keeps trying.
func (s *LocalStore) takeOver() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.release != nil {
		return
	}
	// Waits for the lock a moment: the process that served the store may
	// still be letting it go.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	held, err := s.lock.TryLockContext(ctx, 50*time.Millisecond)
	if err != nil || !held {
		// Another process took it over, or will.
		return
	}
	if err := s.serve(); err != nil {
		s.logger.Warn("host state: cannot take the store over", "dir", s.dir, "err", err.Error())
		_ = s.lock.Unlock()
		return
	}
	s.logger.Info("host state: took the store over from a process that ended", "dir", s.dir)
}

// JetStream is the store's JetStream, file-backed with one replica.
func (s *LocalStore) JetStream() (jetstream.JetStream, jetstream.StorageType, int) {
	return s.js, jetstream.FileStorage, 1
}

// Close lets the store go: another process of the user takes it over
// once the server this process served it from is down (which, when it is
// the process's own, waits for the job queue on it to stop).
func (s *LocalStore) Close() {
	s.mu.Lock()
	s.closed = true
	release, nc := s.release, s.nc
	s.release = nil
	s.mu.Unlock()
	if nc != nil {
		nc.Close()
	}
	unlock := func() { _ = s.lock.Unlock() }
	if release == nil {
		unlock()
		return
	}
	release(unlock)
}

func readStoreAddr(dir string) (storeAddr, error) {
	var a storeAddr
	b, err := os.ReadFile(filepath.Join(dir, localAddr))
	if err != nil {
		return a, fmt.Errorf("host state %s: %w", dir, err)
	}
	if err := json.Unmarshal(b, &a); err != nil || a.URL == "" || a.Token == "" {
		return storeAddr{}, fmt.Errorf("host state %s: %s is not a store address", dir, localAddr)
	}
	return a, nil
}

// writeStoreAddr replaces the address file at once: a reader sees the old
// one or the new one, never a part.
func writeStoreAddr(dir string, a storeAddr) error {
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, localAddr+".*")
	if err != nil {
		return fmt.Errorf("host state %s: %w", dir, err)
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("host state %s: %w", dir, err)
	}
	// CreateTemp makes the file 0600: the token is the user's alone.
	if err := os.Rename(f.Name(), filepath.Join(dir, localAddr)); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("host state %s: %w", dir, err)
	}
	return nil
}

func newToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
