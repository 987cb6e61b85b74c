package host

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
)

// Policies holds the policy in force. Reload swaps it whole: a call sees
// either the old policy or the new one, never a mix, and a file that does
// not load leaves the old one in force.
type Policies struct {
	path   string
	lookup func(string) (string, bool)
	cur    atomic.Pointer[Policy]

	mu      sync.Mutex
	watches []func(*Policy)
}

// OpenPolicies loads the policy at path.
func OpenPolicies(path string, lookup func(string) (string, bool)) (*Policies, error) {
	p, err := Load(path, lookup)
	if err != nil {
		return nil, err
	}
	ps := &Policies{path: path, lookup: lookup}
	ps.cur.Store(p)
	return ps, nil
}

// Fixed holds a policy that is never reloaded (tests, embedding).
func Fixed(p *Policy) *Policies {
	ps := &Policies{}
	ps.cur.Store(p)
	return ps
}

// Current is the policy in force.
func (ps *Policies) Current() *Policy { return ps.cur.Load() }

// OnReload calls f with each policy a reload puts in force, after it is
// in force: the server's guard admits the tokens it names.
func (ps *Policies) OnReload(f func(*Policy)) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.watches = append(ps.watches, f)
}

// Reload reads the file again; on error the policy in force stays.
func (ps *Policies) Reload() error {
	p, err := Load(ps.path, ps.lookup)
	if err != nil {
		return err
	}
	// Held through the watches, so that two reloads tell them in the
	// order they put their policies in force.
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.cur.Store(p)
	for _, f := range ps.watches {
		f(p)
	}
	return nil
}

// ReloadOnHangup reloads the file on every SIGHUP until ctx ends, logging
// what happened. Tokens a reload adds reach the servers that watch it
// (OnReload) at once.
func (ps *Policies) ReloadOnHangup(ctx context.Context, logger *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				if err := ps.Reload(); err != nil {
					logger.Error("policy reload failed; the previous policy stays in force", "err", err.Error())
					continue
				}
				logger.Info("policy reloaded", "path", ps.path, "actors", ps.Current().Actors())
			}
		}
	}()
}
