package render

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// probeScript tries every way a page has to reach an address: fetch, XHR,
// an image, an iframe, a WebSocket and a redirect, against each target,
// and WebRTC and a service worker once. It writes what the page saw into
// #done as JSON. What the page saw is only a report: the servers' hit
// counts and the test dialer's record are what the test believes.
const probeScript = `
const targets = %s, wsTargets = %s, udpPort = %d;
const results = {};
const settle = (name, p) => Promise.race([p, new Promise(r => setTimeout(() => r('timeout'), 4000))]).then(v => { results[name] = v; });
const viaFetch = u => fetch(u, {mode: 'no-cors'}).then(() => 'ok', () => 'failed');
const viaXHR = u => new Promise(r => { const x = new XMLHttpRequest(); x.open('GET', u); x.onload = () => r('ok'); x.onerror = () => r('failed'); x.send(); });
const viaImg = u => new Promise(r => { const i = new Image(); i.onload = () => r('ok'); i.onerror = () => r('failed'); i.src = u; });
const viaFrame = u => new Promise(r => { const f = document.createElement('iframe'); f.onload = () => r('loaded'); f.src = u; document.body.append(f); });
const viaWS = u => new Promise(r => { try { const w = new WebSocket(u); w.onopen = () => r('open'); w.onerror = () => r('failed'); } catch (e) { r('threw ' + e.name); } });
const probes = [];
for (const t of targets) {
	probes.push(settle('fetch ' + t, viaFetch(t + '/fetch')));
	probes.push(settle('xhr ' + t, viaXHR(t + '/xhr')));
	probes.push(settle('img ' + t, viaImg(t + '/img')));
	probes.push(settle('frame ' + t, viaFrame(t + '/frame')));
	probes.push(settle('redirect ' + t, viaFetch('/redirect?to=' + encodeURIComponent(t + '/redirected'))));
}
for (const t of wsTargets) probes.push(settle('ws ' + t, viaWS(t + '/ws')));
results.webrtc = typeof RTCPeerConnection;
if (typeof RTCPeerConnection === 'function') {
	const pc = new RTCPeerConnection({iceServers: [{urls: 'stun:127.0.0.1:' + udpPort}]});
	pc.createDataChannel('x');
	probes.push(settle('webrtc offer', pc.createOffer().then(o => pc.setLocalDescription(o)).then(() => new Promise(r => setTimeout(r, 1500))).then(() => 'gathered')));
}
results.serviceWorker = 'serviceWorker' in navigator;
Promise.all(probes).then(() => {
	const d = document.createElement('pre'); d.id = 'done'; d.textContent = JSON.stringify(results); document.body.append(d);
});`

// hitCounter is a loopback server that counts requests per path.
type hitCounter struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func newHitCounter(t *testing.T, h http.Handler) *hitCounter {
	c := &hitCounter{hits: map[string]int{}}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.hits[r.URL.Path]++
		c.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *hitCounter) count(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits[path]
}

func (c *hitCounter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.hits {
		n += v
	}
	return n
}

func (c *hitCounter) port() int { return c.Listener.Addr().(*net.TCPAddr).Port }

// The test's network is the Renderer's: it renders with a browser of its
// own.
func TestRenderKeepsThePageInsideThePolicy(t *testing.T) {
	t.Parallel()
	requireChromium(t)

	// other is a second loopback server: the page may reach it only when
	// allow_local is set.
	other := newHitCounter(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		if r.URL.Path == "/img" {
			w.Header().Set("Content-Type", "image/gif")
			_, _ = w.Write([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"))
			return
		}
		_, _ = io.WriteString(w, "reached")
	}))
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = udp.Close() }()
	var udpPackets sync.WaitGroup
	udpCount := 0
	udpPackets.Go(func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := udp.ReadFrom(buf); err != nil {
				return
			}
			udpCount++
		}
	})
	udpPort := udp.LocalAddr().(*net.UDPAddr).Port

	otherBase := fmt.Sprintf("http://127.0.0.1:%d", other.port())
	privates := []string{"http://10.0.0.1", "http://192.168.1.1", "http://169.254.169.254", "http://[fd00::1]", "http://private.test"}

	var site *hitCounter
	site = newHitCounter(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
		case "/leave":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, "<!doctype html><title>leave</title><p>first page</p><script>setTimeout(() => { location = 'http://rebind-d.test:%d/left' }, 50)</script>", site.port())
		case "/probe":
			rebind := fmt.Sprintf("http://%s:%d", r.URL.Query().Get("rebind"), site.port())
			targets, _ := json.Marshal(append([]string{otherBase, rebind}, privates...))
			ws, _ := json.Marshal([]string{strings.Replace(otherBase, "http:", "ws:", 1), "ws://10.0.0.1", "ws://private.test"})
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, "<!doctype html><title>probe</title><p>probe page</p><script>"+probeScript+"</script>", targets, ws, udpPort)
		default:
			_, _ = io.WriteString(w, "site "+r.URL.Path)
		}
	}))

	nw := newNetwork(t)
	nw.name("site.test", publicAddr.String())
	nw.name("private.test", "10.9.9.9")
	// A rebinding name answers the renderer's first look with the public
	// address and every later one with loopback.
	nw.name("rebind-a.test", publicAddr.String(), "127.0.0.1")
	nw.name("rebind-b.test", publicAddr.String(), "127.0.0.1")
	nw.name("rebind-c.test", publicAddr.String(), "127.0.0.1")
	nw.name("rebind-d.test", publicAddr.String(), "127.0.0.1")

	logs := &syncBuffer{}
	r := New(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), WithAllowLocal(true))
	r.resolver, r.dialAddr = nw.dns.Resolver(), nw.dial
	defer func() { _ = r.Close() }()

	probe := func(t *testing.T, pageURL string, allowLocal bool) map[string]any {
		t.Helper()
		// Each probe may take 4s, and a loaded machine more: the render
		// has as long as the test waits for it.
		req := localReq(pageURL, func(o *distillv1.FetchOptions) {
			o.JsWaitFor = "#done"
			o.TimeoutSecs = proto.Int32(30)
		})
		req.Options.AllowLocal = allowLocal
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := r.Render(ctx, req)
		if err != nil {
			t.Fatalf("render probe page: %v", err)
		}
		m := regexp.MustCompile(`<pre id="done">(.*?)</pre>`).FindStringSubmatch(string(res.GetHtml()))
		if m == nil {
			t.Fatalf("probe page did not finish:\n%s", res.GetHtml())
		}
		var results map[string]any
		if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &results); err != nil {
			t.Fatal(err)
		}
		t.Logf("page saw: %v", results)
		return results
	}

	t.Run("without allow_local nothing but the public site is reached", func(t *testing.T) {
		results := probe(t, fmt.Sprintf("http://site.test:%d/probe?rebind=rebind-a.test", site.port()), false)
		if n := other.total(); n != 0 {
			t.Errorf("the other loopback port was reached %d times: %v", n, other.hits)
		}
		if n := site.count("/fetch") + site.count("/img") + site.count("/xhr") + site.count("/frame"); n != 0 {
			t.Errorf("the rebinding name reached loopback %d times", n)
		}
		if bad := nw.dialedOutside(false); len(bad) > 0 {
			t.Errorf("dialled outside the policy: %v", bad)
		}
		// The WebSocket is refused by the egress proxy, the layer that sees
		// it; the rebinding name passed the first look and is refused at
		// connect.
		for _, want := range []string{
			fmt.Sprintf("target=127.0.0.1:%d", other.port()),
			"rebind-a.test is 127.0.0.1",
		} {
			if !strings.Contains(logs.String(), want) {
				t.Errorf("no refusal logged for %s", want)
			}
		}
		if results["ws "+strings.Replace(otherBase, "http:", "ws:", 1)] == "open" {
			t.Error("the page opened a WebSocket to loopback")
		}
	})

	t.Run("with allow_local loopback is reached and private addresses are not", func(t *testing.T) {
		results := probe(t, fmt.Sprintf("http://127.0.0.1:%d/probe?rebind=rebind-b.test", site.port()), true)
		// Every probe must be able to get through when allowed, or the
		// refusals above prove nothing.
		for _, path := range []string{"/fetch", "/xhr", "/img", "/frame", "/redirected", "/ws"} {
			if other.count(path) == 0 {
				t.Errorf("allowed probe %s did not reach the other loopback port (page saw %v)", path, results)
			}
		}
		if bad := nw.dialedOutside(true); len(bad) > 0 {
			t.Errorf("dialled outside the policy: %v", bad)
		}
		for _, p := range privates {
			if results["fetch "+p] == "ok" || results["img "+p] == "ok" {
				t.Errorf("the page reached %s", p)
			}
		}
	})

	t.Run("a navigation refused at connect is a policy error", func(t *testing.T) {
		before := site.total()
		req := localReq(fmt.Sprintf("http://rebind-c.test:%d/probe", site.port()), nil)
		req.Options.AllowLocal = false
		_, err := r.Render(context.Background(), req)
		if failure.CodeOf(err) != failure.Blocked || !strings.Contains(err.Error(), "rebind-c.test is 127.0.0.1") {
			t.Fatalf("err = %v (%v), want Blocked naming the rebound address", err, failure.CodeOf(err))
		}
		if site.total() != before {
			t.Fatal("the rebinding name reached the loopback server")
		}
	})

	t.Run("a page that goes on to a name refused at connect is a policy error", func(t *testing.T) {
		req := localReq(fmt.Sprintf("http://site.test:%d/leave", site.port()), nil)
		req.Options.AllowLocal = false
		_, err := r.Render(context.Background(), req)
		if failure.CodeOf(err) != failure.Blocked || !strings.Contains(err.Error(), "rebind-d.test is 127.0.0.1") {
			t.Fatalf("err = %v (%v), want Blocked naming the rebound address", err, failure.CodeOf(err))
		}
		if n := site.count("/left"); n != 0 {
			t.Fatalf("the rebinding name reached the loopback server %d times", n)
		}
	})

	t.Run("no WebRTC, no UDP, no service worker", func(t *testing.T) {
		results := probe(t, fmt.Sprintf("http://127.0.0.1:%d/probe?rebind=rebind-b.test", site.port()), true)
		if results["webrtc"] != "undefined" {
			t.Errorf("RTCPeerConnection is %v on the page", results["webrtc"])
		}
		if results["serviceWorker"] != false {
			t.Errorf("navigator.serviceWorker is present")
		}
		_ = udp.Close()
		udpPackets.Wait()
		if udpCount != 0 {
			t.Errorf("%d UDP packets reached the STUN port", udpCount)
		}
	})
}

// Nothing leaves a render but the page's own requests: not Chromium's
// background services (autofill, components, safe browsing, connectivity
// probes, field trials), which the launch flags switch off and the
// browser-wide sink refuses, and nothing else through the render's egress
// proxy. Every name the egress looks up is answered, so any request it
// would forward shows in the DNS record and the dialler's.
func TestRenderSendsOnlyThePagesRequests(t *testing.T) {
	t.Parallel()
	requireChromium(t)
	own := []string{"/page", "/style.css", "/app.js", "/img.gif", "/api"}
	site := newHitCounter(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, `<!doctype html><html><head><title>own</title><link rel="stylesheet" href="/style.css"><script src="/app.js"></script></head>
				<body><img src="/img.gif"><div id="out"></div></body></html>`)
		case "/style.css":
			w.Header().Set("Content-Type", "text/css")
			_, _ = io.WriteString(w, "body { color: black }")
		case "/app.js":
			w.Header().Set("Content-Type", "text/javascript")
			_, _ = io.WriteString(w, `fetch('/api').then(r => r.text()).then(t => {
				const d = document.createElement('p'); d.id = 'done'; d.textContent = t; document.body.append(d); });`)
		case "/img.gif":
			w.Header().Set("Content-Type", "image/gif")
			_, _ = w.Write([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"))
		default:
			_, _ = io.WriteString(w, "api answer")
		}
	}))
	nw := newNetwork(t)
	nw.name("site.test", publicAddr.String())
	nw.answerAll(publicAddr)

	logs := &syncBuffer{}
	r := New(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	r.resolver, r.dialAddr = nw.dns.Resolver(), nw.dial
	defer func() { _ = r.Close() }()

	req := localReq(fmt.Sprintf("http://site.test:%d/page", site.port()), func(o *distillv1.FetchOptions) {
		o.JsWaitFor = "#done"
		// Network quiet as well: the render stays open for whatever the
		// browser would send after the page.
		o.JsWait = proto.Int32(3)
	})
	req.Options.AllowLocal = false
	res, err := r.Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.GetHtml()), "api answer") {
		t.Fatalf("the page did not finish:\n%s", res.GetHtml())
	}
	for _, p := range own {
		if n := site.count(p); n != 1 {
			t.Errorf("the page's %s reached the server %d times, want once", p, n)
		}
	}
	if n := site.total(); n != len(own) {
		t.Errorf("the server got %d requests, want only the page's %d: %v", n, len(own), site.hits)
	}
	if names := nw.namesBut("site.test"); len(names) > 0 {
		t.Errorf("the egress looked up names the page never asked for: %v", names)
	}
	if dialed := nw.dialedBut(fmt.Sprintf("%s:%d", publicAddr, site.port())); len(dialed) > 0 {
		t.Errorf("the egress dialled addresses the page never asked for: %v", dialed)
	}
	if !strings.Contains(logs.String(), "chromium request in a render refused") {
		t.Error("no request of chromium's own was refused in the render; the favicon check proves nothing")
	}
	// What Chromium sends for itself outside the render (this Chromium still
	// asks Google for the time, component updates and accounts once a
	// context opens, whatever the flags) goes to the browser-wide sink,
	// which answers none of it (TestSinkRefusesEverything): none of it
	// reached the network above.
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "outside any render refused") {
			t.Log(line)
		}
	}
}

func TestSinkRefusesEverything(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	sink, err := startSink(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sink.Close() }()
	for _, tt := range []struct{ request, target string }{
		{"GET http://clients2.google.com/time/1/current?cup2key=secret HTTP/1.1\r\nHost: clients2.google.com\r\n\r\n", "target=clients2.google.com\n"},
		{"CONNECT accounts.google.com:443 HTTP/1.1\r\nHost: accounts.google.com:443\r\n\r\n", "target=accounts.google.com:443\n"},
	} {
		c, err := net.Dial("tcp", sink.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(c, tt.request); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		got, err := io.ReadAll(c)
		_ = c.Close()
		if len(got) > 0 || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("%q: the sink answered %q (%v), want the connection closed unanswered", tt.request, got, err)
		}
		// The sink logs a request before it closes the connection, so the
		// line is there once the connection is closed.
		if !strings.Contains(logs.String(), tt.target) {
			t.Errorf("no refusal logged for %s:\n%s", tt.target, logs.String())
		}
	}
	if strings.Contains(logs.String(), "secret") {
		t.Error("a query string reached the log")
	}
}
