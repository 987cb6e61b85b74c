package jobs

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// A NATS server without JetStream accepts connections, so only asking
// JetStream tells that batches cannot work; readiness says how to fix it.
func TestReadyNeedsJetStream(t *testing.T) {
	for _, tc := range []struct {
		name      string
		jetStream bool
		want      string
	}{
		{"without JetStream", false, "JetStream is not enabled on NATS at nats://127.0.0.1:"},
		{"with JetStream", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoSigs: true, NoLog: true, JetStream: tc.jetStream, StoreDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			ns.Start()
			defer ns.Shutdown()
			if !ns.ReadyForConnections(10 * time.Second) {
				t.Fatal("NATS did not start")
			}
			nc, js, err := Connect(ns.ClientURL(), "test", quiet)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			err = Ready(t.Context(), nc, js)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Ready = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasSuffix(err.Error(), "(start nats-server with -js)")):
				t.Fatalf("Ready = %v, want %q ... (start nats-server with -js)", err, tc.want)
			}
		})
	}
}
