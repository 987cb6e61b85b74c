package session

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/envflag"
	"distill.dev/services/platform/natsembed"
)

func embeddedJetStream(t *testing.T) jetstream.JetStream {
	t.Helper()
	srv, err := natsembed.Start(natsembed.Config{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	nc, err := srv.Connect("test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

var testKey = bytes.Repeat([]byte{7}, 32)

func sampleState(id string) *internalv1.SessionState {
	return &internalv1.SessionState{
		Id: id, CurrentUrl: "https://example.com/members", Steps: 3,
		Jar:      []*internalv1.JarEntry{{Url: "https://example.com/login", Cookie: &internalv1.Cookie{Name: "sid", Value: "s3cret-cookie-value"}}},
		Snapshot: &distillv1.Distilled{Title: "Members", Markdown: "Welcome back, alice."},
	}
}

func TestKVStore(t *testing.T) {
	t.Parallel()
	js := embeddedJetStream(t)
	ctx := context.Background()
	store, err := NewKVStore(js, testKey, 2, time.Minute, 1)
	if err != nil {
		t.Fatal(err)
	}

	if err := store.Create(ctx, sampleState("s_a")); err != nil {
		t.Fatal(err)
	}
	st, rev, err := store.Load(ctx, "s_a")
	if err != nil || !proto.Equal(st, sampleState("s_a")) {
		t.Fatalf("load: %v, %v", st, err)
	}

	t.Run("nothing rests in the clear", func(t *testing.T) {
		kv, err := js.KeyValue(ctx, Bucket)
		if err != nil {
			t.Fatal(err)
		}
		e, err := kv.Get(ctx, "s_a")
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{"s3cret-cookie-value", "alice", "example.com"} {
			if bytes.Contains(e.Value(), []byte(secret)) {
				t.Errorf("the stored session shows %q", secret)
			}
		}
		other, _ := NewKVStore(js, bytes.Repeat([]byte{8}, 32), 2, time.Minute, 1)
		if _, _, err := other.Load(ctx, "s_a"); failure.CodeOf(err) != failure.Internal || !strings.Contains(err.Error(), string(envflag.SessionKey)) {
			t.Errorf("load with another key: %v", err)
		}
	})

	t.Run("a save over a stale revision is refused", func(t *testing.T) {
		st.Steps = 4
		if err := store.Save(ctx, st, rev); err != nil {
			t.Fatal(err)
		}
		st.Steps = 5
		if err := store.Save(ctx, st, rev); failure.CodeOf(err) != failure.Conflict {
			t.Fatalf("second save on the old revision: %v", err)
		}
		got, _, _ := store.Load(ctx, "s_a")
		if got.GetSteps() != 4 {
			t.Fatalf("steps = %d, want the first save's 4", got.GetSteps())
		}
	})

	t.Run("cap, delete, missing", func(t *testing.T) {
		if err := store.Create(ctx, sampleState("s_b")); err != nil {
			t.Fatal(err)
		}
		if err := store.Create(ctx, sampleState("s_c")); failure.CodeOf(err) != failure.Exhausted {
			t.Fatalf("third session: %v", err)
		}
		if ok, err := store.Delete(ctx, "s_b"); !ok || err != nil {
			t.Fatalf("delete: %v %v", ok, err)
		}
		if ok, _ := store.Delete(ctx, "s_b"); ok {
			t.Fatal("deleting twice reported a deletion")
		}
		if _, _, err := store.Load(ctx, "s_b"); failure.CodeOf(err) != failure.NotFound {
			t.Fatalf("load deleted: %v", err)
		}
		if n, _ := store.Count(ctx); n != 1 {
			t.Fatalf("count = %d", n)
		}
	})
}

func TestKVStoreExpiresIdleSessions(t *testing.T) {
	t.Parallel()
	js := embeddedJetStream(t)
	ctx := context.Background()
	store, err := NewKVStore(js, testKey, 4, time.Second, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Create(ctx, sampleState("s_idle")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, _, err := store.Load(ctx, "s_idle")
		if failure.CodeOf(err) == failure.NotFound {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session outlived its idle time: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Two managers over one store are two gateways of a cluster: a session
// started on one goes on on the other, cookies included.
func TestSessionMovesBetweenGateways(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	js := embeddedJetStream(t)
	store, err := NewKVStore(js, testKey, 8, time.Minute, 1)
	if err != nil {
		t.Fatal(err)
	}
	a := newManager(t, Config{Store: store})
	b := newManager(t, Config{Store: store})

	v := start(t, a, s.URL+"/login", nil)
	res, err := submit(b, v.GetSessionId(), "form_0", map[string]string{"user": "alice", "password": "pw"}, true)
	if err != nil || res.GetView().GetSnapshot().GetTitle() != "Members area" {
		t.Fatalf("sign-in on the second gateway: %v", err)
	}
	obs, err := a.Observe(context.Background(), &distillv1.SessionObserveRequest{SessionId: v.GetSessionId(), Url: s.URL + "/members"})
	if err != nil || obs.GetView().GetSnapshot().GetTitle() != "Members area" || obs.GetView().GetLoop().GetState().GetStepsTaken() != 3 {
		t.Fatalf("members' page back on the first gateway: %v", err)
	}
	if _, err := b.Close(context.Background(), &distillv1.SessionCloseRequest{SessionId: v.GetSessionId()}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Follow(context.Background(), &distillv1.SessionFollowRequest{SessionId: v.GetSessionId(), ActionId: "link_0"}); failure.CodeOf(err) != failure.NotFound {
		t.Fatalf("closed on one gateway, still open on the other: %v", err)
	}
}
