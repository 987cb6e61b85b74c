package session

import "sync"

// lockTable holds a mutex for each session a step of this process is
// taking or waiting for. An entry lives only as long as it has holders, so
// sessions that expire or are closed elsewhere leave nothing behind; each
// session has a mutex of its own, as steps hold it across network calls.
type lockTable struct {
	mu    sync.Mutex
	locks map[string]*idLock
}

type idLock struct {
	sync.Mutex
	holders int // steps holding or waiting for the lock; guarded by lockTable.mu
}

// lock waits for the session's mutex; unlock releases it and drops the
// entry once no step holds or awaits it.
func (t *lockTable) lock(id string) (unlock func()) {
	l := t.hold(id)
	l.Lock()
	return func() {
		l.Unlock()
		t.release(id, l)
	}
}

// hold counts one more holder of id's lock, making the entry if it is the
// first. The count is taken before the wait, so the entry outlives every
// step queued for it.
func (t *lockTable) hold(id string) *idLock {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.locks == nil {
		t.locks = map[string]*idLock{}
	}
	l := t.locks[id]
	if l == nil {
		l = &idLock{}
		t.locks[id] = l
	}
	l.holders++
	return l
}

// release counts one holder less and drops the entry with its last.
func (t *lockTable) release(id string, l *idLock) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if l.holders--; l.holders == 0 {
		delete(t.locks, id)
	}
}
