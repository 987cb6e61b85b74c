package render

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"distill.dev/proto/failure"
)

// instance is one launched Chromium. It is replaced, never repaired: once
// its connection fails the next Render launches another.
type instance struct {
	cmd      *exec.Cmd
	pid      int
	devtools *devtools
	dataDir  string
	// sink is the browser-wide proxy: it drops every connection, so
	// nothing outside a render's own context reaches the network.
	sink net.Listener
	// exited closes once the process is gone and its profile removed.
	exited chan struct{}
}

// chromiumFlags are the browser's command line but for its profile and
// its proxy.
var chromiumFlags = []string{
	"--headless",
	// DevTools speaks over fds 3 and 4 (see devtools): no TCP port.
	"--remote-debugging-pipe",
	"--no-first-run",
	"--no-startup-window",
	"--no-default-browser-check",
	"--enable-automation",
	"--disable-gpu",
	"--disable-dev-shm-usage",
	"--disable-quic",
	"--dns-prefetch-disable",
	"--disable-popup-blocking",
	"--disable-prompt-on-repost",
	"--disable-hang-monitor",
	"--disable-ipc-flooding-protection",
	"--disable-background-timer-throttling",
	"--disable-backgrounding-occluded-windows",
	"--disable-renderer-backgrounding",
	"--disable-site-isolation-trials",
	"--force-color-profile=srgb",
	// Chromium's own traffic: none of it is a page's request, and the
	// sink refuses whatever is left, but a service switched off does not
	// even try. Field trials would switch features back on from a config
	// built into the binary.
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--disable-domain-reliability",
	"--disable-breakpad",
	"--disable-extensions",
	"--disable-component-extensions-with-background-pages",
	"--disable-default-apps",
	"--disable-field-trial-config",
	"--disable-search-engine-choice-screen",
	"--metrics-recording-only",
	"--no-pings",
	"--password-store=basic",
	// WebRTC may not send UDP around the proxy (and a proxy that speaks
	// HTTP carries none).
	"--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
	"--webrtc-ip-handling-policy=disable_non_proxied_udp",
	"--enable-features=NetworkService,NetworkServiceInProcess",
	// site-per-process off keeps cross-site iframes in the page's target,
	// where its request hijacking sees them; PlzDedicatedWorker off keeps
	// worker requests there too. The rest stop requests the page never
	// asked for: prerendering and prediction, and the services that call
	// home (autofill, optimization hints, translation, media router,
	// certificate transparency lists, HTTPS-upgrade probes).
	"--disable-features=" + strings.Join([]string{
		"site-per-process", "IsolateOrigins", "PlzDedicatedWorker",
		"Prerender2", "SpeculationRulesPrefetchFuture", "NetworkPrediction", "PreconnectToSearch",
		"AutofillServerCommunication", "OptimizationHints", "OptimizationHintsFetching",
		"Translate", "TranslateUI", "MediaRouter", "DialMediaRouteProvider", "GlobalMediaControls",
		"CertificateTransparencyComponentUpdater", "HttpsUpgrades", "LensOverlay",
		"InterestFeedContentSuggestions",
	}, ","),
}

// launch starts Chromium from bin and waits until it answers on its pipe.
// rod would download a browser when it has no binary, which a service
// must never do; this never does.
func launch(ctx context.Context, logger *slog.Logger, bin string, noSandbox bool) (*instance, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, failure.New(failure.RenderFailed, "chromium not found at %s (give another with --chromium or DISTILL_CHROMIUM)", bin)
	}
	dir, err := os.MkdirTemp("", "distill-chromium-")
	if err != nil {
		return nil, failure.Wrap(failure.RenderFailed, err, "chromium profile")
	}
	sink, err := startSink(logger)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, failure.Wrap(failure.RenderFailed, err, "chromium proxy sink")
	}
	inst, stderr, err := startChromium(bin, chromiumArgs(dir, sink.Addr().String(), noSandbox), dir, sink)
	if err != nil {
		_ = sink.Close()
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if _, err := (proto.BrowserGetVersion{}).Call(inst.devtools.root(ctx)); err != nil {
		inst.abort()
		if msg := stderr.String(); msg != "" {
			return nil, failure.Wrap(failure.RenderFailed, err, "launch chromium %s: %s", bin, msg)
		}
		return nil, failure.Wrap(failure.RenderFailed, err, "launch chromium %s", bin)
	}
	return inst, nil
}

// chromiumArgs is the browser's command line: its profile in dir, its
// proxy the sink at sinkAddr, and chromiumFlags.
func chromiumArgs(dir, sinkAddr string, noSandbox bool) []string {
	args := append([]string{
		"--user-data-dir=" + dir,
		// Every render's context names its own egress proxy; anything
		// else the browser might send goes to the sink. "<-loopback>"
		// removes the implicit bypass for loopback.
		"--proxy-server=http://" + sinkAddr,
		"--proxy-bypass-list=<-loopback>",
	}, chromiumFlags...)
	if noSandbox {
		args = append(args, "--no-sandbox")
	}
	return args
}

// startChromium starts the browser with DevTools on a pair of pipes, and
// the tail of what it says on stderr. The caller still owns dir and sink
// when it fails.
func startChromium(bin string, args []string, dir string, sink net.Listener) (*instance, *tail, error) {
	// Chromium reads commands from its fd 3 and writes to its fd 4.
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		return nil, nil, failure.Wrap(failure.RenderFailed, err, "devtools pipe")
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		_ = cmdR.Close()
		_ = cmdW.Close()
		return nil, nil, failure.Wrap(failure.RenderFailed, err, "devtools pipe")
	}
	stderr := &tail{max: 4 << 10}
	cmd := exec.Command(bin, args...)
	cmd.ExtraFiles = []*os.File{cmdR, outW}
	cmd.Stderr = stderr
	// Its own process group, so that killing it takes every renderer and
	// helper process with it; and killed when this process dies, however
	// it dies.
	cmd.SysProcAttr = sysProcAttr()
	inst := &instance{cmd: cmd, devtools: newDevtools(cmdW, outR), dataDir: dir, sink: sink, exited: make(chan struct{})}
	if err := inst.start(cmdR, outW); err != nil {
		inst.devtools.close()
		return nil, nil, failure.Wrap(failure.RenderFailed, err, "launch chromium %s", bin)
	}
	return inst, stderr, nil
}

// start starts the process, closing childEnds, the pipes' ends it was
// given, once it has them. Once it runs, its exit closes the DevTools
// pipe, removes the profile and closes exited.
func (i *instance) start(childEnds ...*os.File) error {
	started := make(chan error, 1)
	go func() {
		// The kernel's parent-death signal follows the thread that started
		// the process, not the process: this goroutine keeps that thread
		// to itself until Chromium is gone, and its end then ends the
		// thread.
		runtime.LockOSThread()
		err := i.cmd.Start()
		for _, f := range childEnds {
			_ = f.Close()
		}
		if err == nil {
			i.pid = i.cmd.Process.Pid
		}
		started <- err
		if err != nil {
			return
		}
		_ = i.cmd.Wait()
		i.devtools.close()
		_ = os.RemoveAll(i.dataDir)
		close(i.exited)
	}()
	return <-started
}

// alive reports whether the browser still answers.
func (i *instance) alive() bool {
	select {
	case <-i.exited:
		return false
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := proto.BrowserGetVersion{}.Call(i.devtools.root(ctx))
	return err == nil
}

// kill ends the browser, politely first, and waits until its profile is
// removed.
func (i *instance) kill() { i.end(true) }

// abort kills a browser that crashed or stopped answering, without asking.
func (i *instance) abort() { i.end(false) }

func (i *instance) end(polite bool) {
	wait := time.Duration(0)
	if polite {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = proto.BrowserClose{}.Call(i.devtools.root(ctx))
		cancel()
		wait = 3 * time.Second
	}
	select {
	case <-i.exited:
	case <-time.After(wait):
		// The whole group: no renderer or GPU child is left behind.
		killGroup(i.pid)
		_ = i.cmd.Process.Kill()
		<-i.exited
	}
	_ = i.sink.Close()
}

// conn is one render's own DevTools client. rod remembers every page and
// every call's parameters on the client that made them, so a render that
// used a shared one would leave its page and its cookies in memory for the
// browser's lifetime; a client per render takes them away when it closes.
type conn struct {
	client  *client
	browser *rod.Browser
}

func (i *instance) connect(ctx context.Context) (*conn, error) {
	c, err := i.devtools.attach(ctx)
	if err != nil {
		return nil, err
	}
	b := rod.New().Context(ctx).Client(c)
	if err := b.Connect(); err != nil {
		c.close()
		return nil, fmt.Errorf("connect to chromium: %w", err)
	}
	return &conn{client: c, browser: b}, nil
}

func (c *conn) close() { c.client.close() }

// dispose clears a render's cookies and destroys its browser context, over
// the pipe's own session: the render's may already be gone.
func (i *instance) dispose(id proto.BrowserBrowserContextID) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	b := i.devtools.root(ctx)
	_ = proto.StorageClearCookies{BrowserContextID: id}.Call(b)
	_ = proto.TargetDisposeBrowserContext{BrowserContextID: id}.Call(b)
}

// startSink listens on loopback and refuses every request it gets: they
// are Chromium's own, made outside any render's context (the flags switch
// off what they can; this catches the rest). It reads just enough to log
// where each was going.
func startSink(logger *slog.Logger) (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = c.Close() }()
				_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
				line, _ := bufio.NewReaderSize(c, 512).ReadString('\n')
				// "CONNECT host:443 HTTP/1.1" or "GET http://host/path HTTP/1.1"
				target := "unknown"
				if f := strings.Fields(line); len(f) == 3 {
					target = f[1]
					if u, err := url.Parse(target); err == nil && u.Host != "" {
						target = u.Host
					}
				}
				logger.Debug("chromium request outside any render refused", "target", target)
			}()
		}
	}()
	return ln, nil
}

// tail keeps the last max bytes written to it: what Chromium said on
// stderr before it failed to start.
type tail struct {
	max int
	mu  sync.Mutex
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

// String is the last line written.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(t.b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}
