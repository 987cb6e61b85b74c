package app

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// A NATS server started without -js takes connections, but no batch or
// session can work on it: the gateway is not ready, and says how to fix it.
func TestClusterNotReadyWithoutJetStream(t *testing.T) {
	t.Parallel()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	defer ns.Shutdown()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS did not start")
	}
	sys, err := Open(t.Context(), quiet, Config{Cluster: &ClusterConfig{
		NATSURL: ns.ClientURL(), FetcherAddr: "127.0.0.1:1", ExtractorAddr: "127.0.0.1:1", SessionKey: make([]byte, 32),
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	want := "JetStream is not enabled on NATS at " + ns.ClientURL() + " (start nats-server with -js)"
	if err := sys.Ready(t.Context()); err == nil || err.Error() != want {
		t.Errorf("Ready = %v, want %q", err, want)
	}
}
