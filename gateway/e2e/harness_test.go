// Package e2e runs distill in cluster mode on loopback and breaks it.
//
// The tests that stop, kill or restart a part run distill as it runs in
// production: a NATS server process, fetcher, extractor and renderer
// processes and gateways, built from this checkout (or taken from the
// folder localcluster.BinEnv names, where make builds them once per run).
// The others run the same services inside the test process, each serving
// gRPC on a loopback port of its own, joined by an embedded NATS server
// that listens on loopback too: they cross the same wires in less time.
//
// The tests run whole clusters: in short mode (make test-short) they are
// skipped, and make test runs them.
package e2e

import (
	"bytes"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"distill.dev/gateway/internal/localcluster"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// built is the folder binaries built for this package's tests, which
// TestMain removes.
var built string

var binaries = sync.OnceValues(func() (string, error) {
	bins := localcluster.Binaries()
	names := make([]string, len(bins))
	for i, b := range bins {
		names[i] = b.Name
	}
	if dir := os.Getenv(localcluster.BinEnv); dir != "" {
		return dir, localcluster.Check(dir, names...)
	}
	dir, err := os.MkdirTemp("", "distill-e2e-")
	if err != nil {
		return "", err
	}
	built = dir
	root, err := filepath.Abs("../..")
	if err != nil {
		return "", err
	}
	return dir, localcluster.Build(root, dir)
})

func TestMain(m *testing.M) {
	// The tests wait on processes, networks and timers far more than they
	// compute: run more of them at once than there are cores, unless told
	// otherwise.
	flag.Parse()
	parallelSet := false
	flag.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "test.parallel" })
	if !parallelSet {
		_ = flag.Set("test.parallel", strconv.Itoa(max(8, runtime.GOMAXPROCS(0))))
	}
	code := m.Run()
	if built != "" {
		_ = os.RemoveAll(built)
	}
	os.Exit(code)
}

// skipShort skips the test in short mode: every test here runs a cluster.
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs distill's services end to end: make test runs it, make test-short does not")
	}
}

// binDir is the folder of distill's binaries.
func binDir(t *testing.T) string {
	t.Helper()
	skipShort(t)
	dir, err := binaries()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// cluster is a localcluster.Cluster that fails its test instead of
// returning errors.
type cluster struct {
	*localcluster.Cluster
	t *testing.T
}

type clusterOpts = localcluster.Options

func startCluster(t *testing.T, o clusterOpts) *cluster {
	t.Helper()
	lc, err := localcluster.Start(binDir(t), t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{Cluster: lc, t: t}
	t.Cleanup(func() {
		lc.Stop()
		// The binaries are built with the race detector when the tests
		// run under it: a race in a process fails the test that ran it.
		if races := lc.Races(); races != "" {
			t.Errorf("a process reported a data race:\n%s", races)
		} else if t.Failed() {
			t.Log(lc.Logs(4000))
		}
	})
	return c
}

// checkProc fails the test when p, a process started on its own, reported
// a data race, and logs what p logged when the test failed.
func checkProc(t *testing.T, p *localcluster.Proc) {
	t.Helper()
	switch {
	case p.Log != nil && strings.Contains(p.Log.String(), localcluster.RaceReport):
		t.Errorf("%s reported a data race:\n%s", p.Name, p.Log.String())
	case t.Failed():
		t.Log(p.Log.String())
	}
}

func (c *cluster) client(i int) distillv1.DistillServiceClient {
	c.t.Helper()
	cc, err := c.Conn(c.Gateways[i].Addr)
	if err != nil {
		c.t.Fatal(err)
	}
	return distillv1.NewDistillServiceClient(cc)
}

func (c *cluster) signal(p *localcluster.Proc, sig syscall.Signal) {
	c.t.Helper()
	if err := p.Signal(sig); err != nil {
		c.t.Error(err)
	}
}

func (c *cluster) restart(p *localcluster.Proc) {
	c.t.Helper()
	if err := c.Restart(p); err != nil {
		c.t.Fatal(err)
	}
}

func (c *cluster) waitStatus(p *localcluster.Proc, want healthpb.HealthCheckResponse_ServingStatus, within time.Duration) {
	c.t.Helper()
	if err := c.WaitStatus(p, want, within); err != nil {
		c.t.Fatal(err)
	}
}

// runCLI runs the distill CLI and returns stdout, stderr and the exit
// code.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir(t), "distill"), args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// pages serves numbered article pages, an app shell, and a page whose
// render hangs until the test lets go.
type pages struct {
	*httptest.Server
	delay   time.Duration
	mu      sync.Mutex
	hits    map[string]int
	hangHit chan struct{}
	// held paths are answered only once their channel is closed.
	held map[string]chan struct{}
}

// hold makes requests for path wait until release is closed.
func (p *pages) hold(path string, release chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.held[path] = release
}

func newPages(t *testing.T, delay time.Duration) *pages {
	p := &pages{delay: delay, hits: map[string]int{}, hangHit: make(chan struct{}, 16), held: map[string]chan struct{}{}}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.hits[r.URL.Path]++
		release := p.held[r.URL.Path]
		p.mu.Unlock()
		if release != nil {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch {
		case r.URL.Path == "/login" && r.Method == http.MethodPost:
			_ = r.ParseForm()
			if r.PostForm.Get("user") != "alice" {
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprint(w, "<title>no</title><p>Wrong user.</p>")
				return
			}
			http.SetCookie(w, &http.Cookie{Name: "sid", Value: "alice-e2e-cookie", Path: "/", HttpOnly: true})
			http.Redirect(w, r, "/members", http.StatusSeeOther)
			return
		case r.URL.Path == "/login":
			fmt.Fprint(w, `<!doctype html><title>Sign in</title><main><h1>Sign in</h1><p>Members sign in here to reach their pages.</p>
				<form method="post" action="/login"><input name="user"><button>Sign in</button></form></main>`)
			return
		case r.URL.Path == "/members":
			if c, err := r.Cookie("sid"); err != nil || c.Value != "alice-e2e-cookie" {
				w.WriteHeader(http.StatusForbidden)
				fmt.Fprint(w, "<title>Members only</title><p>Sign in first.</p>")
				return
			}
			fmt.Fprint(w, `<!doctype html><title>Members area</title><main><h1>Members area</h1><p>Welcome back, alice; here are your pages.</p><a href="/p/7">Your page</a></main>`)
			return
		case r.URL.Path == "/hang":
			// The fetch gets the shell; the browser's request for the
			// script hangs.
			fmt.Fprint(w, `<!doctype html><title>hang</title><div id="root"></div><script src="/hang.js"></script>`)
			return
		case r.URL.Path == "/hang.js":
			select {
			case p.hangHit <- struct{}{}:
			default:
			}
			<-r.Context().Done()
			return
		case strings.HasPrefix(r.URL.Path, "/shell/"):
			fmt.Fprintf(w, `<!doctype html><title>shell</title><div id="root"></div><script>document.getElementById('root').innerHTML = '<main><h1>Shell %[1]s</h1><p>%[2]s</p></main>'</script>`,
				strings.TrimPrefix(r.URL.Path, "/shell/"), strings.Repeat("Rendered words of a client-side page. ", 8))
			return
		}
		if p.delay > 0 {
			time.Sleep(p.delay)
		}
		fmt.Fprintf(w, "<!doctype html><html><head><title>Page %[1]s</title></head><body><main><h1>Page %[1]s</h1><p>%[2]s</p></main></body></html>",
			strings.TrimPrefix(r.URL.Path, "/p/"), strings.Repeat("Words of the page for the reader. ", 6))
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *pages) urls(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s/p/%d", p.URL, i)
	}
	return out
}
