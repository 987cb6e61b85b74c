package cli

import (
	"os"
	"strings"
	"testing"

	"distill.dev/services/platform/envflag"
)

func TestClusterModeSaysWhatItLacks(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"no session key", nil, []string{"serve", "--cluster", "--nats", "nats://127.0.0.1:1", "--fetcher", "127.0.0.1:1", "--extractor", "127.0.0.1:1"}, "set DISTILL_SESSION_KEY"},
		{"a short session key", map[string]string{string(envflag.SessionKey): "c2hvcnQ="}, []string{"serve", "--cluster"}, "must hold 32 bytes, it holds 5"},
		{"no NATS", map[string]string{string(envflag.SessionKey): "ZGlzdGlsbC1lMmUtc2Vzc2lvbi1rZXktMzItYnl0ZXM="}, []string{"serve", "--cluster", "--nats=", "--fetcher", "127.0.0.1:1", "--extractor", "127.0.0.1:1"}, "needs NATS URLs (--nats)"},
		{"no extractor", map[string]string{string(envflag.SessionKey): "ZGlzdGlsbC1lMmUtc2Vzc2lvbi1rZXktMzItYnl0ZXM="}, []string{"serve", "--cluster", "--nats", "nats://127.0.0.1:1", "--fetcher", "127.0.0.1:1", "--extractor="}, "the extractor's address (--extractor)"},
		// A variable that cannot be read stops distill before it starts
		// anything, instead of falling back to the default unseen.
		{"unreadable replicas", map[string]string{string(envflag.StreamReplicas): "three"}, []string{"serve", "--cluster"}, `DISTILL_STREAM_REPLICAS="three": not an integer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(string(envflag.SessionKey), "")
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			if tt.env == nil {
				// Unset, not empty: the variable must be absent.
				unsetenv(t, string(envflag.SessionKey))
			}
			_, errOut, code := run(t, append(tt.args, "--listen", "127.0.0.1:0")...)
			first, _, _ := strings.Cut(errOut, "\n")
			if code != ExitUsage || !strings.Contains(first, tt.want) {
				t.Fatalf("exit %d, stderr %q; want a usage error whose first line names %q", code, errOut, tt.want)
			}
		})
	}
}

// unsetenv removes key for the test, restoring it afterwards.
func unsetenv(t *testing.T, key string) {
	t.Helper()
	old, had := os.LookupEnv(key)
	if err := os.Unsetenv(key); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if had {
			_ = os.Setenv(key, old)
		}
	})
}
