package remote

import (
	"context"
	"testing"
	"time"
)

// TestGraceIsGraceFromNow checks the wait a call makes for a service that
// is not ready: it ends Grace after the call began, or with the call.
func TestGraceIsGraceFromNow(t *testing.T) {
	c := &Conn{}
	call, cancelCall := context.WithCancel(context.Background())
	before := time.Now()
	wait, cancel := c.graceWait(call)
	after := time.Now()
	defer cancel()
	d, ok := wait.Deadline()
	if !ok || d.Before(before.Add(Grace)) || d.After(after.Add(Grace)) {
		t.Fatalf("the wait ends at %v (set: %v), want Grace after %v to %v", d, ok, before, after)
	}
	cancelCall()
	<-wait.Done()
}
