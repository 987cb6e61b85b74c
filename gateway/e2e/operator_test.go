package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"distill.dev/gateway/internal/localcluster"
	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// startServe runs `distill serve` in one process with flags, on a free
// port, until the test ends, and returns its address and a client.
func startServe(t *testing.T, flags ...string) (addr string, client distillv1.DistillServiceClient) {
	t.Helper()
	addr, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	serve := &localcluster.Proc{
		Name: "distill",
		Args: append([]string{"--cache-dir", t.TempDir(), "serve", "--listen", addr, "--log-level", "info"}, flags...),
	}
	serve.SetBin(binDir(t))
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if serve.Running() {
			_ = serve.Signal(syscall.SIGTERM)
			_ = serve.Exit()
		}
		checkProc(t, serve)
	})
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return addr, distillv1.NewDistillServiceClient(conn)
}

func wantAllowLocalRefused(t *testing.T, what string, err error) {
	t.Helper()
	if status.Code(err) != codes.InvalidArgument || failure.CodeOf(err) != failure.InvalidArgument || !strings.Contains(err.Error(), failure.AllowLocalMessage) {
		t.Errorf("%s: err = %v (grpc %v), want InvalidArgument: %s", what, err, status.Code(err), failure.AllowLocalMessage)
	}
}

// allow_local is the operator's: a `distill serve` started without
// --allow-local refuses every call that asks for it, through every call
// and through `distill fetch --server`; started with it, it serves them.
func TestServeHonoursAllowLocalOnlyWithTheFlag(t *testing.T) {
	skipShort(t)
	t.Parallel()
	site := newPages(t, 0)
	addr, client := startServe(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	local := &distillv1.FetchOptions{AllowLocal: true}

	_, err := client.Fetch(ctx, &distillv1.FetchRequest{Url: site.URL + "/p/1", Options: local}, grpc.WaitForReady(true))
	wantAllowLocalRefused(t, "Fetch", err)
	_, err = client.Observe(ctx, &distillv1.ObserveRequest{Url: site.URL + "/p/1", Options: local})
	wantAllowLocalRefused(t, "Observe", err)
	stream, err := client.FetchBatch(ctx, &distillv1.FetchBatchRequest{Urls: []string{site.URL + "/p/1", site.URL + "/p/2"}, Options: local})
	if err == nil {
		_, err = stream.Recv()
	}
	wantAllowLocalRefused(t, "FetchBatch", err)
	_, err = client.SessionStart(ctx, &distillv1.SessionStartRequest{Url: site.URL + "/p/1", AllowLocal: true})
	wantAllowLocalRefused(t, "SessionStart", err)
	if n := site.total(); n != 0 {
		t.Errorf("the pages were requested %d times", n)
	}

	out, errOut, code := runCLI(t, "fetch", "--server", addr, "--allow-local", site.URL+"/p/1")
	if code != 1 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, failure.AllowLocalMessage) {
		t.Errorf("distill fetch --server --allow-local: exit %d, stdout %q, stderr %q; want exit 1 and one line: %s", code, out, errOut, failure.AllowLocalMessage)
	}
	// In this process the user is the operator: --allow-local is theirs.
	if out, errOut, code := runCLI(t, "--cache-dir", t.TempDir(), "fetch", "--allow-local", site.URL+"/p/1"); code != 0 || !strings.Contains(out, "Page 1") {
		t.Errorf("distill fetch --allow-local: exit %d, stderr %q", code, errOut)
	}

	_, allowed := startServe(t, "--allow-local")
	res, err := allowed.Fetch(ctx, &distillv1.FetchRequest{Url: site.URL + "/p/1", Options: local}, grpc.WaitForReady(true))
	if err != nil || res.GetDistilled().GetTitle() != "Page 1" {
		t.Errorf("serve --allow-local: %v, %v", res.GetDistilled().GetTitle(), err)
	}
}

// Even with --allow-local, `distill serve` never fetches nor renders its
// own ports: its gRPC API and its metrics.
func TestServeNeverReachesItsOwnPorts(t *testing.T) {
	skipShort(t)
	t.Parallel()
	metrics, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr, client := startServe(t, "--allow-local", "--metrics-listen", metrics)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for _, target := range []struct{ url, want string }{
		{"http://" + addr + "/", "distill's own gRPC port"},
		{"http://" + metrics + "/metrics", "distill's own metrics port"},
	} {
		for _, js := range []distillv1.JsMode{distillv1.JsMode_JS_MODE_OFF, distillv1.JsMode_JS_MODE_ALWAYS} {
			_, err := client.Fetch(ctx, &distillv1.FetchRequest{Url: target.url, Options: &distillv1.FetchOptions{AllowLocal: true, Js: js}}, grpc.WaitForReady(true))
			if failure.CodeOf(err) != failure.Blocked || !strings.Contains(err.Error(), target.want) {
				t.Errorf("%s with js %v: err = %v, want BLOCKED naming %s", target.url, js, err, target.want)
			}
		}
	}

	// The fetch stops a page aimed at those ports before any render; a
	// rendered page that asks for them itself is stopped by the renderer.
	control := newPages(t, 0)
	probe := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>probe</title><main><h1>Probe</h1><p id="out">waiting</p></main><script>
const targets = {grpc: %q, metrics: %q, control: %q};
Promise.all(Object.entries(targets).map(([k, u]) => fetch(u, {mode: "no-cors"}).then(() => k + "=reached", () => k + "=refused"))).then(rs => {
  document.getElementById("out").textContent = "Outcome: " + rs.join(" ") + ".";
  const d = document.createElement("div"); d.id = "done"; document.body.appendChild(d);
});
</script>`, "http://"+addr+"/", "http://"+metrics+"/metrics", control.URL+"/p/1")
	}))
	defer probe.Close()
	res, err := client.Fetch(ctx, &distillv1.FetchRequest{Url: probe.URL + "/", Options: &distillv1.FetchOptions{
		AllowLocal: true, Js: distillv1.JsMode_JS_MODE_ALWAYS, JsWaitFor: "#done",
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.GetDistilled().GetMarkdown(); !strings.Contains(got, "grpc=refused metrics=refused control=reached") {
		t.Errorf("the rendered page saw %q, want distill's own ports refused and the other server reached", got)
	}
}

// In a cluster the services hold to their own operator's word too: a
// gateway that allows loopback cannot make a fetcher or a renderer started
// without -allow-local fetch it.
func TestClusterServicesRefuseAllowLocalOnTheirOwn(t *testing.T) {
	skipShort(t)
	t.Parallel()
	c := startCluster(t, clusterOpts{NoAllowLocal: []string{"fetcher", "renderer"}})
	site := newPages(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	local := &distillv1.FetchOptions{AllowLocal: true}
	_, err := c.client(0).Fetch(ctx, &distillv1.FetchRequest{Url: site.URL + "/p/1", Options: local})
	if !strings.Contains(err.Error(), failure.AllowLocalMessage) {
		t.Errorf("Fetch through a gateway with --allow-local: %v, want the fetcher's refusal", err)
	}
	stream, err := c.client(0).FetchBatch(ctx, &distillv1.FetchBatchRequest{Urls: []string{site.URL + "/p/1"}, Options: local})
	if err != nil {
		t.Fatal(err)
	}
	for {
		res, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.GetError().GetMessage(), failure.AllowLocalMessage) {
			t.Errorf("batch item %d: %v, want the fetcher's refusal", res.GetIndex(), res.GetOutcome())
		}
	}
	if n := site.total(); n != 0 {
		t.Errorf("the pages were requested %d times", n)
	}
}

// total counts the requests the pages got.
func (p *pages) total() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, h := range p.hits {
		n += h
	}
	return n
}
