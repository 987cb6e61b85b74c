package render

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/cdp"
	"github.com/go-rod/rod/lib/launcher"
	"github.com/go-rod/rod/lib/proto"

	"distill.dev/proto/failure"
)

// instance is one launched Chromium. It is replaced, never repaired: once
// its connection fails the next Render launches another.
type instance struct {
	launcher   *launcher.Launcher
	browser    *rod.Browser
	controlURL string
	dataDir    string
	// sink is the browser-wide proxy: it drops every connection, so
	// nothing outside a render's own context reaches the network.
	sink net.Listener
	// exited closes once the process is gone and its profile removed.
	exited chan struct{}
}

// launch starts Chromium from bin. rod downloads a browser when it has no
// binary, which a service must never do, so a missing bin is an error here.
func launch(ctx context.Context, bin string, noSandbox bool) (*instance, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, failure.New(failure.RenderFailed, "chromium not found at %s (give another with --chromium or DISTILL_CHROMIUM)", bin)
	}
	dir, err := os.MkdirTemp("", "distill-chromium-")
	if err != nil {
		return nil, failure.Wrap(failure.RenderFailed, err, "chromium profile")
	}
	sink, err := startSink()
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, failure.Wrap(failure.RenderFailed, err, "chromium proxy sink")
	}
	l := launcher.New().
		Context(ctx).
		Bin(bin).
		Headless(true).
		NoSandbox(noSandbox).
		// Leakless kills the browser if this process dies without Close.
		Leakless(true).
		UserDataDir(dir).
		Set("disable-gpu").
		Set("no-first-run").
		Set("disable-background-networking").
		Set("disable-component-update").
		Set("disable-sync").
		Set("disable-quic").
		Set("dns-prefetch-disable").
		// Every render's context names its own egress proxy; anything
		// else the browser might send goes to the sink.
		Set("proxy-server", "http://"+sink.Addr().String()).
		Set("proxy-bypass-list", "<-loopback>").
		// WebRTC may not send UDP around the proxy (and a proxy that
		// speaks HTTP carries none).
		Set("force-webrtc-ip-handling-policy", "disable_non_proxied_udp").
		Set("webrtc-ip-handling-policy", "disable_non_proxied_udp").
		// site-per-process off keeps cross-site iframes in the page's target,
		// where its request hijacking sees them; PlzDedicatedWorker off keeps
		// worker requests there too. The rest stop requests the page never
		// asked for.
		Set("disable-features",
			"site-per-process", "IsolateOrigins", "PlzDedicatedWorker", "TranslateUI",
			"Prerender2", "SpeculationRulesPrefetchFuture", "NetworkPrediction",
			"PreconnectToSearch", "OptimizationHints", "MediaRouter", "DialMediaRouteProvider")
	u, err := l.Launch()
	if err != nil {
		l.Kill()
		_ = sink.Close()
		_ = os.RemoveAll(dir)
		return nil, failure.Wrap(failure.RenderFailed, err, "launch chromium %s", bin)
	}
	inst := &instance{launcher: l, controlURL: u, dataDir: dir, sink: sink, exited: make(chan struct{})}
	go func() {
		l.Cleanup()
		close(inst.exited)
	}()
	b := rod.New().ControlURL(u)
	if err := b.Connect(); err != nil {
		inst.kill()
		return nil, failure.Wrap(failure.RenderFailed, err, "connect to chromium")
	}
	inst.browser = b
	return inst, nil
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
	_, err := proto.BrowserGetVersion{}.Call(i.browser.Context(ctx))
	return err == nil
}

// kill ends the browser, politely first, and waits until its profile is
// removed.
func (i *instance) kill() { i.end(true) }

// abort kills a browser that crashed or stopped answering, without asking.
func (i *instance) abort() { i.end(false) }

func (i *instance) end(polite bool) {
	if polite && i.browser != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = i.browser.Context(ctx).Close()
		cancel()
	}
	wait := 3 * time.Second
	if !polite {
		wait = 0
	}
	select {
	case <-i.exited:
	case <-time.After(wait):
		// The launcher started Chromium in its own process group and
		// kills the whole group: no renderer or GPU child is left behind.
		i.launcher.Kill()
		<-i.exited
	}
	_ = i.sink.Close()
	// Cleanup already removed it unless Chromium was still writing there.
	_ = os.RemoveAll(i.dataDir)
}

// conn is one render's own CDP connection. rod remembers every page and
// every call's parameters on the connection that made them, so a render
// that used the shared connection would leave its page and its cookies in
// memory for the browser's lifetime; a connection per render takes them
// away when it closes.
type conn struct {
	ws      *cdp.WebSocket
	browser *rod.Browser
}

func (i *instance) connect(ctx context.Context) (*conn, error) {
	ws := &cdp.WebSocket{}
	if err := ws.Connect(ctx, i.controlURL, nil); err != nil {
		return nil, fmt.Errorf("connect to chromium: %w", err)
	}
	b := rod.New().Context(ctx).Client(cdp.New().Start(ws))
	if err := b.Connect(); err != nil {
		_ = ws.Close()
		return nil, fmt.Errorf("connect to chromium: %w", err)
	}
	return &conn{ws: ws, browser: b}, nil
}

func (c *conn) close() { _ = c.ws.Close() }

// dispose clears a render's cookies and destroys its browser context, over
// the instance's own connection: the render's may already be gone.
func (i *instance) dispose(id proto.BrowserBrowserContextID) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	b := i.browser.Context(ctx)
	_ = proto.StorageClearCookies{BrowserContextID: id}.Call(b)
	_ = proto.TargetDisposeBrowserContext{BrowserContextID: id}.Call(b)
}

// startSink listens on loopback and closes every connection it accepts.
func startSink() (net.Listener, error) {
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
			_ = c.Close()
		}
	}()
	return ln, nil
}
