package render

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// stepsSite serves the pages the step tests drive.
func stepsSite(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	// A list that grows by three items per click on "load more", from a
	// request to its API, until the API has no more.
	mux.HandleFunc("/more", page(`<ul id="list"></ul><button id="more">load more</button><script>
		let next = 0;
		async function load() {
			const items = await (await fetch('/items?from=' + next)).json();
			for (const it of items) { const li = document.createElement('li'); li.textContent = it; list.append(li); }
			next += items.length;
			if (next >= 9) more.remove();
		}
		more.onclick = load; load();</script>`))
	mux.HandleFunc("/items", func(w http.ResponseWriter, r *http.Request) {
		var from int
		_, _ = fmt.Sscan(r.URL.Query().Get("from"), &from)
		var items []string
		for i := from; i < from+3 && i < 9; i++ {
			items = append(items, fmt.Sprintf(`"item %d"`, i))
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, "[%s]", strings.Join(items, ","))
	})
	// A form whose Enter shows what was typed, without leaving the page.
	mux.HandleFunc("/form", page(`<input id="q"><p id="out">nothing</p><script>
		q.addEventListener('keydown', e => { if (e.key === 'Enter') out.textContent = 'searched ' + q.value; });</script>`))
	// A feed that appends a page of items each time the end is reached,
	// five times; a tall block keeps the end out of view.
	mux.HandleFunc("/feed", page(`<div id="feed"></div><div id="end" style="height:10px"></div><script>
		let pages = 0;
		function add() { const d = document.createElement('div'); d.className = 'page'; d.style.height = '1500px'; d.textContent = 'feed page ' + pages; feed.append(d); pages++; }
		add();
		new IntersectionObserver(es => { if (es[0].isIntersecting && pages < 6) fetch('/items?from=0').then(() => add()); }).observe(end);</script>`))
	// A page that shows a marker once scrolled.
	mux.HandleFunc("/tall", page(`<div style="height:5000px">top</div><p id="bottom">bottom</p><script>
		addEventListener('scroll', () => { if (!document.getElementById('seen')) { const p = document.createElement('p'); p.id = 'seen'; p.textContent = 'scrolled'; document.body.append(p); } });</script>`))
	mux.HandleFunc("/dialogs", page(`<button id="ask">ask</button><p id="out">not asked</p><script>
		ask.onclick = () => { out.textContent = 'confirm said ' + confirm('sure?'); };</script>`))
	mux.HandleFunc("/popup", page(`<button id="pop">open</button><script>pop.onclick = () => { window.w = window.open('/form'); };</script>`))
	mux.HandleFunc("/away", page(`<a id="go" href="http://169.254.169.254/latest/meta-data/">metadata</a><a id="ok" href="/form">form</a>`))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func stepsReq(u, steps string, mod func(*distillv1.FetchOptions)) *internalv1.RenderRequest {
	return localReq(u, func(o *distillv1.FetchOptions) {
		o.Steps = steps
		if mod != nil {
			mod(o)
		}
	})
}

func TestStepsRun(t *testing.T) {
	t.Parallel()
	requireChromium(t)
	srv := stepsSite(t)

	for _, tt := range []struct {
		name, path, steps string
		want              []string
	}{
		{"click repeats while there is more", "/more", `[{"type":"click","selector":"#more","repeat":10}]`,
			[]string{"item 0", "item 8"}},
		{"type and press", "/form", `[{"type":"type","selector":"#q","value":"otters"},{"type":"press","key":"Enter"}]`,
			[]string{"searched otters"}},
		{"write is Firecrawl's type", "/form", `[{"type":"click","selector":"#q"},{"type":"write","selector":"#q","text":"seals"},{"type":"press","key":"Enter"}]`,
			[]string{"searched seals"}},
		{"scroll and wait for what it shows", "/tall", `[{"type":"scroll","direction":"down","amount":2000},{"type":"waitForSelector","selector":"#seen"},{"type":"wait","milliseconds":50}]`,
			[]string{`id="seen"`}},
		{"a dialog a step opens is dismissed", "/dialogs", `[{"type":"click","selector":"#ask"}]`,
			[]string{"confirm said false"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := shared.Render(context.Background(), stepsReq(srv.URL+tt.path, tt.steps, nil))
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(res.GetHtml()), w) {
					t.Errorf("html lacks %q:\n%s", w, res.GetHtml())
				}
			}
			if res.StepsRun == nil {
				t.Errorf("steps_run not set")
			}
		})
	}
}

func TestStepsReturnScriptValuesAndScreenshots(t *testing.T) {
	t.Parallel()
	requireChromium(t)
	srv := stepsSite(t)
	steps := `[
		{"type":"executeJavascript","script":"document.querySelectorAll('li').length"},
		{"type":"executeJavascript","script":"const t = document.title; return {title: t, n: 2}"},
		{"type":"executeJavascript","script":"document.body.append('from script')"},
		{"type":"screenshot"}]`
	res, err := shared.Render(context.Background(), stepsReq(srv.URL+"/more", steps, nil))
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	items := res.GetSteps().GetItems()
	if len(items) != 4 {
		t.Fatalf("%d step results, want 4: %v", len(items), items)
	}
	for i, want := range []string{"3", `{"title":"t","n":2}`, "null"} {
		if items[i].GetIndex() != int32(i) || items[i].GetType() != "executeJavascript" || items[i].GetValue() != want {
			t.Errorf("result %d = %v, want index %d value %s", i, items[i], i, want)
		}
	}
	if !strings.Contains(string(res.GetHtml()), "from script") {
		t.Errorf("the script's change is not in the DOM")
	}
	w, h := decodeImage(t, items[3].GetScreenshot(), "png")
	if w != ViewportWidth || h != ViewportHeight {
		t.Errorf("step screenshot %dx%d, want the %dx%d viewport", w, h, ViewportWidth, ViewportHeight)
	}
	if res.GetStepsRun() != 4 {
		t.Errorf("steps_run = %d, want 4", res.GetStepsRun())
	}
}

// The first failing step fails the render, and its error names the step.
func TestStepsFailNamingTheStep(t *testing.T) {
	t.Parallel()
	requireChromium(t)
	srv := stepsSite(t)
	for _, tt := range []struct {
		name, path, steps string
		code              distillv1.ErrorCode
		want              string
	}{
		{"element never appears", "/form", `[{"type":"click","selector":"#q"},{"type":"waitForSelector","selector":"#never","milliseconds":300}]`,
			failure.Timeout, `step 1 (waitForSelector "#never")`},
		{"unparsable selector fails at once", "/form", `[{"type":"click","selector":"#q"},{"type":"click","selector":"a[href="}]`,
			failure.InvalidArgument, `step 1 (click "a[href=")`},
		{"script throws", "/form", `[{"type":"executeJavascript","script":"throw new Error('boom')"}]`,
			failure.RenderFailed, "step 0 (executeJavascript)"},
		{"script values over the cap", "/form", `[{"type":"executeJavascript","script":"'x'.repeat(600000)"},{"type":"executeJavascript","script":"'y'.repeat(600000)"}]`,
			failure.TooLarge, "step 1 (executeJavascript)"},
		{"a step navigates where the policy refuses", "/away", `[{"type":"click","selector":"#go"}]`,
			failure.Blocked, `step 0 (click "#go")`},
		{"a script sends the page where the policy refuses", "/form", `[{"type":"wait","milliseconds":1},{"type":"executeJavascript","script":"location = 'http://10.0.0.1/'"}]`,
			failure.Blocked, "step 1 (executeJavascript)"},
		// The steps' budget is the render's timeout again, 10 s here.
		{"the steps outrun their budget", "/form", `[{"type":"wait","milliseconds":6000},{"type":"wait","milliseconds":6000}]`,
			failure.Timeout, "step 1 (wait): the steps did not finish within their 10s budget"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := shared.Render(context.Background(), stepsReq(srv.URL+tt.path, tt.steps, nil))
			if failure.CodeOf(err) != tt.code || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v (%v), want %v naming %s", err, failure.CodeOf(err), tt.code, tt.want)
			}
		})
	}
}

// A malformed list is refused before anything loads.
func TestStepsRefusedBeforeLoading(t *testing.T) {
	t.Parallel()
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits++ }))
	defer srv.Close()
	for _, steps := range []string{`{"type":"click"}`, `[{"type":"click"}]`, `[{"type":"fly"}]`, `[{"type":"wait","milliseconds":999999}]`, `[{"type":"press","key":"Hyper"}]`} {
		_, err := shared.Render(context.Background(), stepsReq(srv.URL, steps, nil))
		if failure.CodeOf(err) != failure.InvalidArgument || !strings.Contains(err.Error(), "--steps") {
			t.Errorf("steps %s: err = %v, want InvalidArgument naming --steps", steps, err)
		}
	}
	if hits != 0 {
		t.Errorf("the page was requested %d times", hits)
	}
}

func TestStepsClosePopups(t *testing.T) {
	t.Parallel()
	requireChromium(t)
	srv := stepsSite(t)
	steps := `[{"type":"click","selector":"#pop"},{"type":"wait","milliseconds":300},{"type":"executeJavascript","script":"window.w ? window.w.closed : 'no popup'"}]`
	res, err := shared.Render(context.Background(), stepsReq(srv.URL+"/popup", steps, nil))
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	if got := res.GetSteps().GetItems()[0].GetValue(); got != "true" {
		t.Fatalf("popup closed = %s, want true", got)
	}
}

func TestScrollUntilThePageStopsGrowing(t *testing.T) {
	t.Parallel()
	requireChromium(t)
	srv := stepsSite(t)
	res, err := shared.Render(context.Background(), localReq(srv.URL+"/feed", func(o *distillv1.FetchOptions) {
		o.Scroll = proto.Int32(0)
	}))
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	if n := strings.Count(string(res.GetHtml()), `class="page"`); n != 6 {
		t.Errorf("%d feed pages, want all 6", n)
	}
	if res.GetStepsRun() != 5 {
		t.Errorf("steps_run = %d, want 5 scrolls that grew the page", res.GetStepsRun())
	}

	// At most N scrolls.
	res, err = shared.Render(context.Background(), localReq(srv.URL+"/feed", func(o *distillv1.FetchOptions) {
		o.Scroll = proto.Int32(2)
	}))
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	if n := strings.Count(string(res.GetHtml()), `class="page"`); n != 3 {
		t.Errorf("%d feed pages after 2 scrolls, want 3", n)
	}
}

// The load keeps the render's timeout when steps give the render a budget
// beyond it: a page that never loads is a Timeout, not a failed render.
func TestStepsLeaveTheLoadItsTimeout(t *testing.T) {
	t.Parallel()
	requireChromium(t)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	// Ten seconds, not two: the page's time starts before its tab opens,
	// and on a loaded machine opening one beside the suite's other
	// renders once took two (the render then timed out before its load
	// began, which is not what this test is about).
	_, err := shared.Render(context.Background(), stepsReq(srv.URL, `[{"type":"wait","milliseconds":1}]`, func(o *distillv1.FetchOptions) {
		o.TimeoutSecs = proto.Int32(10)
	}))
	if failure.CodeOf(err) != failure.Timeout || !strings.Contains(err.Error(), "not loaded within the 10s timeout") {
		t.Fatalf("err = %v (%v), want a Timeout of the load", err, failure.CodeOf(err))
	}
}
