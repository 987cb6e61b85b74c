package render

import (
	"context"
	"os"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/launcher"
	"github.com/go-rod/rod/lib/proto"

	"distill.dev/proto/failure"
)

// instance is one launched Chromium. It is replaced, never repaired: once
// its connection fails the next Render launches another.
type instance struct {
	launcher *launcher.Launcher
	browser  *rod.Browser
	dataDir  string
	// exited closes once the process is gone and its profile removed.
	exited chan struct{}
}

// launch starts Chromium from bin. rod downloads a browser when it has no
// binary, which a service must never do, so a missing bin is an error here.
func launch(ctx context.Context, bin string) (*instance, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, failure.New(failure.RenderFailed, "chromium not found at %s (set DISTILL_CHROMIUM)", bin)
	}
	dir, err := os.MkdirTemp("", "distill-chromium-")
	if err != nil {
		return nil, failure.Wrap(failure.RenderFailed, err, "chromium profile")
	}
	l := launcher.New().
		Context(ctx).
		Bin(bin).
		Headless(true).
		NoSandbox(os.Geteuid() == 0).
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
		_ = os.RemoveAll(dir)
		return nil, failure.Wrap(failure.RenderFailed, err, "launch chromium %s", bin)
	}
	inst := &instance{launcher: l, dataDir: dir, exited: make(chan struct{})}
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
func (i *instance) kill() {
	if i.browser != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = i.browser.Context(ctx).Close()
		cancel()
	}
	select {
	case <-i.exited:
	case <-time.After(3 * time.Second):
		i.launcher.Kill()
		<-i.exited
	}
	// Cleanup already removed it unless Chromium was still writing there.
	_ = os.RemoveAll(i.dataDir)
}
