package fetch

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"distill.dev/proto/failure"
	"distill.dev/services/platform/netpolicy"
)

// allow_local is the operator's to grant: a fetcher built without the
// permission refuses a call that asks for it, before any request.
func TestFetchRefusesAllowLocalWithoutOperator(t *testing.T) {
	t.Parallel()
	ts, hits := serve(t, func(w http.ResponseWriter, r *http.Request) { html(w, 200, page) })
	f := New(slog.New(slog.DiscardHandler), WithBackoff(time.Millisecond, 5*time.Millisecond))
	t.Cleanup(f.Close)
	_, err := get(t, f, ts.URL+"/", local())
	wantFailure(t, err, failure.InvalidArgument, "allow_local refused: this server was not started with --allow-local")
	// Without allow_local the call is judged by the policy as ever.
	_, err = get(t, f, ts.URL+"/", nil)
	wantFailure(t, err, failure.Blocked, "loopback")
	if n := hits.Load(); n != 0 {
		t.Fatalf("server got %d requests, want none", n)
	}
}

// The process's own listeners stay out of reach with allow_local, by
// address literal, by a name that resolves to them (judged at connect),
// and by a redirect to them.
func TestFetchRefusesOwnListeners(t *testing.T) {
	t.Parallel()
	ownSrv, ownHits := serve(t, func(w http.ResponseWriter, r *http.Request) { html(w, 200, page) })
	own := netpolicy.NewOwn()
	own.Add(ownSrv.Listener.Addr(), "gRPC port")
	port := ownSrv.Listener.Addr().(*net.TCPAddr).Port
	redirect, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, ownSrv.URL+"/", http.StatusFound)
	})
	other, _ := serve(t, func(w http.ResponseWriter, r *http.Request) { html(w, 200, page) })
	f := newFetcher(t, WithOwn(own))

	for _, url := range []string{
		ownSrv.URL + "/",
		fmt.Sprintf("http://localhost:%d/", port),
		fmt.Sprintf("http://2130706433:%d/", port),
		redirect.URL + "/",
	} {
		t.Run(url, func(t *testing.T) {
			_, err := get(t, f, url, local())
			wantFailure(t, err, failure.Blocked, "distill's own gRPC port")
		})
	}
	if n := ownHits.Load(); n != 0 {
		t.Fatalf("own listener got %d requests, want none", n)
	}
	if resp := mustGet(t, f, other.URL+"/", local()); string(resp.GetBody()) != page {
		t.Fatalf("another loopback server: %q", resp.GetBody())
	}
}
