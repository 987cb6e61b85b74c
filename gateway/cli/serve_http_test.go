package cli

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"distill.dev/gateway/internal/localcluster"
	"distill.dev/services/platform/envflag"
)

// --http serves the Firecrawl-compatible API under the gRPC API's rules:
// tokens or loopback, and never a way into distill's own ports.
func TestServeHTTP(t *testing.T) {
	t.Run("non-loopback refused", func(t *testing.T) {
		_, errOut, code := run(t, "serve", "--listen", "127.0.0.1:0", "--http", "0.0.0.0:0")
		first, _, _ := strings.Cut(errOut, "\n")
		if code == ExitOK || !strings.Contains(first, string(envflag.APITokens)) || !strings.Contains(first, "--no-auth") {
			t.Errorf("exit %d, stderr %q; want a failure naming %s and --no-auth", code, errOut, envflag.APITokens)
		}
	})
	t.Run("tokens and own ports", func(t *testing.T) {
		grpcAddr, err := localcluster.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		httpAddr, err := localcluster.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		stderr := startServe(t, map[string]string{string(envflag.APITokens): testAPIToken}, "--allow-local", "--listen", grpcAddr, "--http", httpAddr)
		deadline := time.Now().Add(time.Minute)
		for !strings.Contains(stderr.String(), "Firecrawl HTTP API listening") {
			if time.Now().After(deadline) {
				t.Fatalf("serve --http did not start:\n%s", stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		scrape := func(token, target string) (int, string) {
			t.Helper()
			req, err := http.NewRequestWithContext(t.Context(), "POST", "http://"+httpAddr+"/v2/scrape", strings.NewReader(`{"url":"`+target+`"}`))
			if err != nil {
				t.Fatal(err)
			}
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var body struct {
				Error string `json:"error"`
			}
			_ = json.NewDecoder(res.Body).Decode(&body)
			return res.StatusCode, body.Error
		}
		if code, msg := scrape("", "http://example.com/"); code != http.StatusUnauthorized {
			t.Errorf("no token: %d %q, want 401", code, msg)
		}
		for _, own := range []struct{ addr, name string }{{httpAddr, "Firecrawl HTTP port"}, {grpcAddr, "gRPC port"}} {
			if code, msg := scrape(testAPIToken, "http://"+own.addr+"/"); code != http.StatusForbidden || !strings.Contains(msg, own.name) {
				t.Errorf("a scrape of distill's own %s answered %d %q, want 403 naming it", own.name, code, msg)
			}
		}
	})
}
