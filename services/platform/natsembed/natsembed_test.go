package natsembed

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

func TestStartConnectAndCarryLargeMessages(t *testing.T) {
	s, err := Start(Config{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	nc, err := s.Connect("test")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if !nc.HeadersSupported() {
		t.Fatal("headers not supported")
	}

	sub, err := nc.SubscribeSync("big")
	if err != nil {
		t.Fatal(err)
	}
	// Bigger than NATS's default 1 MiB payload: a distilled page can be.
	payload := bytes.Repeat([]byte("x"), 5<<20)
	if err := nc.Publish("big", payload); err != nil {
		t.Fatal(err)
	}
	msg, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(msg.Data) != len(payload) {
		t.Fatalf("got %d bytes, want %d", len(msg.Data), len(payload))
	}
}

// Without a store directory each server gets one of its own, so two
// processes on one machine share nothing, and it is gone after shutdown.
func TestTemporaryStoreIsPrivate(t *testing.T) {
	a, err := Start(Config{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Start(Config{})
	if err != nil {
		a.Shutdown()
		t.Fatal(err)
	}
	dirA, dirB := a.ns.JetStreamConfig().StoreDir, b.ns.JetStreamConfig().StoreDir
	b.Shutdown()
	if !strings.HasPrefix(dirA, a.tempDir+string(os.PathSeparator)) || !strings.HasPrefix(dirB, b.tempDir+string(os.PathSeparator)) || a.tempDir == b.tempDir {
		t.Fatalf("stores %s and %s, want each under a directory of its own", dirA, dirB)
	}
	a.Shutdown()
	for _, dir := range []string{a.tempDir, b.tempDir} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s after shutdown: %v, want it removed", dir, err)
		}
	}
}

// A store JetStream cannot use fails the start at once, saying why, rather
// than after the ready timeout.
func TestUnusableStoreFailsFast(t *testing.T) {
	file := t.TempDir() + "/not-a-directory"
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	begun := time.Now()
	s, err := Start(Config{StoreDir: file})
	if err == nil {
		s.Shutdown()
		t.Fatal("started on a store that is a file")
	}
	if !strings.Contains(err.Error(), "embedded nats: Can't start JetStream") || time.Since(begun) > readyTimeout/2 {
		t.Fatalf("after %s: %v", time.Since(begun), err)
	}
}

// With Listen, other processes reach the server over loopback, with the
// token only; in-process clients present it for themselves.
func TestListenWithToken(t *testing.T) {
	s, err := Start(Config{StoreDir: t.TempDir(), Listen: "127.0.0.1:0", Token: "tok-0123456789abcdef"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	url := "nats://" + s.Addr().String()
	if nc, err := nats.Connect(url, nats.NoReconnect()); err == nil {
		nc.Close()
		t.Fatal("a client without the token connected")
	}
	nc, err := nats.Connect(url, nats.Token("tok-0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	in, err := s.Connect("in-process")
	if err != nil {
		t.Fatal(err)
	}
	in.Close()
	if plain, err := Start(Config{StoreDir: t.TempDir()}); err != nil || plain.Addr() != nil {
		t.Fatalf("without Listen: %v, %v", plain.Addr(), err)
	} else {
		plain.Shutdown()
	}
}
