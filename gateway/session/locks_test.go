package session

import (
	"context"
	"testing"
	"time"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

func TestLocksLeaveWithTheirLastHolder(t *testing.T) {
	t.Parallel()
	var locks lockTable
	size := func() int {
		locks.mu.Lock()
		defer locks.mu.Unlock()
		return len(locks.locks)
	}
	unlock := locks.lock("s_a")
	waited := make(chan func())
	go func() { waited <- locks.lock("s_a") }()
	// The second holder is counted before it waits.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		locks.mu.Lock()
		holders := locks.locks["s_a"].holders
		locks.mu.Unlock()
		if holders == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second step never queued for the lock")
		}
	}
	select {
	case <-waited:
		t.Fatal("two steps of one session held its lock at once")
	default:
	}
	otherUnlock := locks.lock("s_b")
	unlock()
	second := <-waited
	if n := size(); n != 2 {
		t.Fatalf("%d entries while both sessions are held, want 2", n)
	}
	second()
	otherUnlock()
	if n := size(); n != 0 {
		t.Fatalf("%d entries left once every step released its lock", n)
	}
}

// A step on a session that has gone elsewhere leaves no lock behind.
func TestStepOnAMissingSessionLeavesNoLock(t *testing.T) {
	t.Parallel()
	m := New(quiet, &gatedDistiller{}, Config{})
	if _, err := m.Observe(context.Background(), &distillv1.SessionObserveRequest{SessionId: "s_gone", Url: "https://example.com/"}); failure.CodeOf(err) != failure.NotFound {
		t.Fatalf("err = %v", err)
	}
	m.locks.mu.Lock()
	defer m.locks.mu.Unlock()
	if len(m.locks.locks) != 0 {
		t.Fatalf("locks = %v", m.locks.locks)
	}
}
