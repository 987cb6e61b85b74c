package session

import (
	"context"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
)

// Store keeps sessions between steps. Revisions make a step's save
// conditional: a save over a revision that is no longer the latest fails
// with failure.Conflict, so two gateways stepping one session at the same
// time cannot lose one of the steps silently.
type Store interface {
	// Count is the number of live sessions.
	Count(ctx context.Context) (int, error)
	// Create adds a session, refusing with failure.Exhausted past the
	// store's cap.
	Create(ctx context.Context, st *internalv1.SessionState) error
	// Load returns a session and its revision, or failure.NotFound.
	Load(ctx context.Context, id string) (*internalv1.SessionState, uint64, error)
	// Save replaces a session loaded at rev, and starts its idle time
	// again.
	Save(ctx context.Context, st *internalv1.SessionState, rev uint64) error
	// Delete removes a session and reports whether it was there.
	Delete(ctx context.Context, id string) (bool, error)
	// Limits are the store's cap on live sessions and the idle time after
	// which a session expires.
	Limits() (maxSessions int, idle time.Duration)
}

// MemoryStore keeps sessions in this process: right for the single binary
// and for a gateway that is the only one.
type MemoryStore struct {
	max int
	ttl time.Duration
	now func() time.Time

	mu       sync.Mutex
	sessions map[string]*memEntry
}

type memEntry struct {
	st   *internalv1.SessionState
	rev  uint64
	used time.Time
}

// NewMemoryStore holds at most max sessions, each until it has been idle
// for ttl.
func NewMemoryStore(maxSessions int, ttl time.Duration) *MemoryStore {
	return &MemoryStore{max: maxSessions, ttl: ttl, now: time.Now, sessions: map[string]*memEntry{}}
}

// Limits implements Store.
func (m *MemoryStore) Limits() (int, time.Duration) { return m.max, m.ttl }

// Count implements Store.
func (m *MemoryStore) Count(context.Context) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep()
	return len(m.sessions), nil
}

// Create implements Store.
func (m *MemoryStore) Create(_ context.Context, st *internalv1.SessionState) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep()
	if len(m.sessions) >= m.max {
		return tooMany(m.max, m.ttl)
	}
	m.sessions[st.GetId()] = &memEntry{st: proto.CloneOf(st), rev: 1, used: m.now()}
	return nil
}

// Load implements Store.
func (m *MemoryStore) Load(_ context.Context, id string) (*internalv1.SessionState, uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep()
	e, ok := m.sessions[id]
	if !ok {
		return nil, 0, failure.New(failure.NotFound, "no session %q", id)
	}
	return proto.CloneOf(e.st), e.rev, nil
}

// Save implements Store.
func (m *MemoryStore) Save(_ context.Context, st *internalv1.SessionState, rev uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.sessions[st.GetId()]
	switch {
	case !ok:
		return failure.New(failure.NotFound, "session %q was closed or expired during the step", st.GetId())
	case e.rev != rev:
		return conflict(st.GetId())
	}
	e.st, e.rev, e.used = proto.CloneOf(st), rev+1, m.now()
	return nil
}

// Delete implements Store.
func (m *MemoryStore) Delete(_ context.Context, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.sessions[id]
	delete(m.sessions, id)
	return ok, nil
}

// sweep drops sessions idle past the ttl; m.mu is held.
func (m *MemoryStore) sweep() {
	now := m.now()
	for id, e := range m.sessions {
		if now.Sub(e.used) > m.ttl {
			delete(m.sessions, id)
		}
	}
}

// tooMany refuses a session past the cap.
func tooMany(maxSessions int, idle time.Duration) error {
	return failure.New(failure.Exhausted, "too many live sessions (%d): close one with session_close, or wait for idle ones to expire after %s", maxSessions, idle)
}

func conflict(id string) error {
	return failure.New(failure.Conflict, "session %q was changed by another step at the same time; this step's result was not kept: observe the page again before acting", id)
}
