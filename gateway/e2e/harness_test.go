// Package e2e runs distill in cluster mode as it runs in production: a NATS
// server process, fetcher, extractor and renderer processes and gateways,
// all on loopback, built from this checkout, and breaks them.
package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"distill.dev/gateway/internal/localcluster"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// bin holds the binaries TestMain built.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "distill-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = dir
	code := 1
	if root, err := filepath.Abs("../.."); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
	} else if err := localcluster.Build(root, dir); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
	} else {
		code = m.Run()
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
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
	lc, err := localcluster.Start(bin, t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{Cluster: lc, t: t}
	t.Cleanup(func() {
		lc.Stop()
		if t.Failed() {
			t.Log(lc.Logs(4000))
		}
	})
	return c
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

// distill runs the distill CLI and returns stdout, stderr and the exit
// code.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "distill"), args...)
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
