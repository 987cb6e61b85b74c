package natsembed

import (
	"bytes"
	"testing"
	"time"
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
