package bench

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/launcher"
	"github.com/go-rod/rod/lib/proto"
	protobuf "google.golang.org/protobuf/proto"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/renderer/render"
)

// The actions workload's pages: a feed that loads a page of items each
// time its end scrolls into view, and a list with a "load more" button.
// Each item comes from a request to the page's API, as in an app.
const (
	feedPages     = 8
	listClicks    = 6
	itemsPerFetch = 10
	// itemTag is how the serialized DOM shows an item.
	itemTag = `<li class="item"`
)

const feedPage = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Feed</title>
<style>li.item{height:120px}</style></head><body><h1>Harbour feed</h1><ul id="feed"></ul><div id="end"></div>
<script>
let page = 0, busy = false;
async function more() {
	if (busy || page >= ` + "FEED_PAGES" + `) return;
	busy = true;
	const items = await (await fetch('/api/items?page=' + page)).json();
	for (const t of items) { const li = document.createElement('li'); li.className = 'item'; li.textContent = t; feed.append(li); }
	page++; busy = false;
}
new IntersectionObserver(es => { if (es[0].isIntersecting) more(); }).observe(document.getElementById('end'));
</script></body></html>`

const listPage = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>List</title></head><body>
<h1>Harbour notices</h1><ul id="list"></ul><button id="more">Load more</button>
<script>
let page = 0;
async function more() {
	const items = await (await fetch('/api/items?page=' + page)).json();
	for (const t of items) { const li = document.createElement('li'); li.className = 'item'; li.textContent = t; list.append(li); }
	page++;
	if (page >= ` + "LIST_CLICKS" + `) document.getElementById('more').remove();
}
document.getElementById('more').onclick = more;
more();
</script></body></html>`

// Items each page holds once every item has loaded.
const (
	feedItems = feedPages * itemsPerFetch
	listItems = listClicks * itemsPerFetch
)

func serveActions(mux *http.ServeMux) {
	html := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			_, _ = w.Write([]byte(body))
		}
	}
	mux.HandleFunc("GET /feed", html(strings.ReplaceAll(feedPage, "FEED_PAGES", strconv.Itoa(feedPages))))
	mux.HandleFunc("GET /list", html(strings.ReplaceAll(listPage, "LIST_CLICKS", strconv.Itoa(listClicks))))
	mux.HandleFunc("GET /api/items", func(w http.ResponseWriter, r *http.Request) {
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		items := make([]string, itemsPerFetch)
		for i := range items {
			items[i] = fmt.Sprintf("%q", fmt.Sprintf("Notice %d: the tide table for berth %d has been revised.", page*itemsPerFetch+i, i))
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = fmt.Fprintf(w, "[%s]", strings.Join(items, ","))
	})
}

// actionsResult is one way's figures on the actions workload.
type actionsResult struct {
	summary
	// Items is what every render collected, the two pages together.
	Items int
}

// listSteps are the list's steps in --steps form; the go-rod peer runs
// the same ones.
var listSteps = fmt.Sprintf(`[{"type":"click","selector":"#more","repeat":%d}]`, listClicks)

// measureActionsPool runs the workload through distill's renderer: the
// feed with --scroll, the list with a repeated click step.
func measureActionsPool(ctx context.Context, cfg Config, logger *slog.Logger, base string) (actionsResult, error) {
	r := render.New(logger, render.WithChromium(cfg.Chromium), render.WithMaxPages(cfg.Concurrency), render.WithAllowLocal(true))
	defer func() { _ = r.Close() }()
	run := func(ctx context.Context, i int) (int, error) {
		opts := &distillv1.FetchOptions{AllowLocal: true, TimeoutSecs: protobuf.Int32(60)}
		u := fmt.Sprintf("%s/feed?pool=%d", base, i)
		if i%2 == 1 {
			u = fmt.Sprintf("%s/list?pool=%d", base, i)
			opts.Steps = listSteps
		} else {
			opts.Scroll = protobuf.Int32(0)
		}
		res, err := r.Render(ctx, &internalv1.RenderRequest{Url: u, Options: opts})
		if err != nil {
			return 0, fmt.Errorf("distill pool %s: %w", u, err)
		}
		return bytes.Count(res.GetHtml(), []byte(itemTag)), nil
	}
	return measureActions(ctx, cfg, run)
}

// measureActionsRod runs the same workload as one would with go-rod alone:
// a browser launched per page, the same scroll loop and clicks, the same
// waits for the network to go quiet.
func measureActionsRod(ctx context.Context, cfg Config, base string) (actionsResult, error) {
	run := func(ctx context.Context, i int) (int, error) {
		u := fmt.Sprintf("%s/feed?rod=%d", base, i)
		if i%2 == 1 {
			u = fmt.Sprintf("%s/list?rod=%d", base, i)
		}
		html, err := rodRender(ctx, cfg.Chromium, u, i%2 == 1)
		if err != nil {
			return 0, fmt.Errorf("go-rod %s: %w", u, err)
		}
		return strings.Count(html, itemTag), nil
	}
	return measureActions(ctx, cfg, run)
}

func measureActions(ctx context.Context, cfg Config, run func(ctx context.Context, i int) (int, error)) (actionsResult, error) {
	items := make([]int, cfg.ActionRenders)
	each := func(ctx context.Context, i int) error {
		n, err := run(ctx, i)
		if err != nil {
			return err
		}
		want := feedItems
		if i%2 == 1 {
			want = listItems
		}
		if n != want {
			return fmt.Errorf("render %d collected %d items, want %d", i, n, want)
		}
		items[i] = n
		return nil
	}
	if _, _, err := measure(ctx, min(cfg.WarmUp, 2), cfg.Concurrency, each); err != nil {
		return actionsResult{}, fmt.Errorf("warm-up: %w", err)
	}
	clear(items)
	lat, wall, err := measure(ctx, cfg.ActionRenders, cfg.Concurrency, each)
	if err != nil {
		return actionsResult{}, err
	}
	total := 0
	for _, n := range items {
		total += n
	}
	return actionsResult{summary: summarize(lat, wall), Items: total}, nil
}

// rodQuiet and rodQuietBudget are the renderer's waits after a step.
const (
	rodQuiet       = 300 * time.Millisecond
	rodQuietBudget = 3 * time.Second
)

// rodRender is the go-rod peer: a fresh browser for u, scrolled to its end
// until it stops growing, or its "load more" clicked until it is gone.
func rodRender(ctx context.Context, bin, u string, list bool) (_ string, err error) {
	ctx, cancel := context.WithTimeout(ctx, renderTimeout)
	defer cancel()
	browser, closeBrowser, err := launchRod(ctx, bin)
	defer closeBrowser()
	if err != nil {
		return "", err
	}
	page, err := browser.Page(proto.TargetCreateTarget{})
	if err != nil {
		return "", err
	}
	if err := (proto.EmulationSetDeviceMetricsOverride{Width: 1280, Height: 800, DeviceScaleFactor: 1}).Call(page); err != nil {
		return "", err
	}
	settled := rodQuietAfter(ctx, page)
	if err := page.Navigate(u); err != nil {
		return "", err
	}
	if err := page.WaitLoad(); err != nil {
		return "", err
	}
	settled()
	if list {
		err = rodClickMore(ctx, page)
	} else {
		err = rodScrollToEnd(ctx, page)
	}
	if err != nil {
		return "", err
	}
	return page.HTML()
}

// launchRod starts the Chromium at bin and connects go-rod to it. The
// function it returns closes the browser, kills the process and removes
// its profile, whatever of them it got to; call it even on an error.
func launchRod(ctx context.Context, bin string) (*rod.Browser, func(), error) {
	// Bin, so that go-rod never downloads a browser.
	l := launcher.New().Bin(bin).Headless(true).Leakless(false).Set("disable-gpu")
	if os.Geteuid() == 0 {
		l = l.NoSandbox(true)
	}
	closers := []func(){l.Cleanup, l.Kill}
	done := func() {
		for _, c := range slices.Backward(closers) {
			c()
		}
	}
	wsURL, err := l.Context(ctx).Launch()
	if err != nil {
		return nil, done, fmt.Errorf("launch: %w", err)
	}
	browser := rod.New().Context(ctx).ControlURL(wsURL)
	if err := browser.Connect(); err != nil {
		return nil, done, fmt.Errorf("connect: %w", err)
	}
	closers = append(closers, func() { _ = browser.Close() })
	return browser, done, nil
}

// rodQuietAfter starts watching page's requests and returns a wait for
// them to go quiet for rodQuiet, given at most rodQuietBudget from when
// it is called: start it before the step it waits after.
func rodQuietAfter(ctx context.Context, page *rod.Page) func() {
	qctx, qcancel := context.WithCancel(ctx)
	wait := page.Context(qctx).WaitRequestIdle(rodQuiet, nil, nil, nil)
	return func() {
		t := time.AfterFunc(rodQuietBudget, qcancel)
		wait()
		t.Stop()
		qcancel()
	}
}

// rodClickMore clicks the list's "load more" until it is gone, at most
// listClicks times, letting the page go quiet after each.
func rodClickMore(ctx context.Context, page *rod.Page) error {
	for range listClicks {
		has, el, err := page.Has("#more")
		if err != nil {
			return err
		}
		if !has {
			return nil
		}
		done := rodQuietAfter(ctx, page)
		if err := el.Click(proto.InputMouseButtonLeft, 1); err != nil {
			return err
		}
		done()
	}
	return nil
}

// rodScrollToEnd scrolls the feed to its end, at most 20 times, until a
// scroll leaves it no taller within a second.
func rodScrollToEnd(ctx context.Context, page *rod.Page) error {
	height := func() (int, error) {
		h, err := page.Eval(`() => document.documentElement.scrollHeight`)
		if err != nil {
			return 0, err
		}
		return h.Value.Int(), nil
	}
	for range 20 {
		before, err := height()
		if err != nil {
			return err
		}
		done := rodQuietAfter(ctx, page)
		if _, err := page.Eval(`() => window.scrollTo(0, document.documentElement.scrollHeight)`); err != nil {
			return err
		}
		done()
		// As the renderer does: a page may append on a timer.
		grew := false
		for deadline := time.Now().Add(time.Second); ; {
			after, err := height()
			if err != nil {
				return err
			}
			if grew = after > before; grew || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if !grew {
			return nil
		}
	}
	return nil
}
