package render

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
)

// A session's steps without confirm send nothing but GETs: the first
// other request is withheld, named with the step that caused it.
func TestStepsWithholdUnsafeRequests(t *testing.T) {
	t.Parallel()
	requireChromium(t)
	var posts atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("GET /form", page(`<form method="post" action="/send"><input name="q" value="tides"><button id="send">send</button></form>
		<form action="/search"><input name="s" value="rocks"><button id="search">search</button></form>`))
	mux.HandleFunc("POST /send", func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		page(`<p>sent</p>`)(w, r)
	})
	mux.HandleFunc("GET /search", page(`<p id="found">found rocks</p>`))
	mux.HandleFunc("GET /elsewhere", page(`<form method="post" action="/send" target="_blank"><input name="q" value="gulls"><button id="send">send</button></form>
		<form method="post" action="/send" target="other" id="scripted"><input name="q" value="terns"></form>`))
	mux.HandleFunc("POST /api", func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		_, _ = io.WriteString(w, "ok")
	})
	srv := newHitCounter(t, mux)

	render := func(t *testing.T, steps string, withhold bool) *internalv1.RenderResponse {
		t.Helper()
		req := stepsReq(srv.URL+"/form", steps, nil)
		req.WithholdUnsafe = withhold
		res, err := shared.Render(context.Background(), req)
		if err != nil {
			t.Fatalf("render: %v", err)
		}
		return res
	}

	t.Run("a form post", func(t *testing.T) {
		res := render(t, `[{"type":"wait","milliseconds":1},{"type":"click","selector":"#send"}]`, true)
		w := res.GetWithheld()
		if w == nil || w.GetMethod() != "POST" || w.GetUrl() != srv.URL+"/send" || w.GetBody() != "q=tides" ||
			w.GetStepIndex() != 1 || w.GetStepType() != "click" || w.GetSelector() != "#send" {
			t.Fatalf("withheld = %v, want the POST of step 1", w)
		}
		if len(res.GetHtml()) != 0 {
			t.Errorf("a withheld render returned a page")
		}
	})
	t.Run("a script's post", func(t *testing.T) {
		w := render(t, `[{"type":"executeJavascript","script":"fetch('/api', {method: 'POST', body: 'x'}).catch(() => 0)"}]`, true).GetWithheld()
		if w == nil || w.GetMethod() != "POST" || w.GetUrl() != srv.URL+"/api" || w.GetStepType() != "executeJavascript" {
			t.Fatalf("withheld = %v, want the script's POST", w)
		}
	})
	// A form posting to another window would be sent by that window,
	// whose requests the page does not hold: it posts in the page's own.
	t.Run("a post to another window", func(t *testing.T) {
		for _, tt := range []struct{ steps, body string }{
			{`[{"type":"click","selector":"#send"}]`, "q=gulls"},
			{`[{"type":"executeJavascript","script":"document.getElementById('scripted').submit()"}]`, "q=terns"},
		} {
			req := stepsReq(srv.URL+"/elsewhere", tt.steps, nil)
			req.WithholdUnsafe = true
			res, err := shared.Render(context.Background(), req)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			if w := res.GetWithheld(); w == nil || w.GetBody() != tt.body {
				t.Errorf("%s: withheld = %v, want the post of %s", tt.steps, w, tt.body)
			}
		}
	})
	t.Run("a GET form goes", func(t *testing.T) {
		res := render(t, `[{"type":"click","selector":"#search"},{"type":"waitForSelector","selector":"#found"}]`, true)
		if res.GetWithheld() != nil || !strings.Contains(string(res.GetHtml()), "found rocks") {
			t.Fatalf("withheld %v, html %s; want the search's answer", res.GetWithheld(), res.GetHtml())
		}
	})
	if n := posts.Load(); n != 0 {
		t.Fatalf("%d POSTs reached the server while withheld", n)
	}
	t.Run("confirmed, it is sent", func(t *testing.T) {
		res := render(t, `[{"type":"click","selector":"#send"},{"type":"executeJavascript","script":"document.cookie = 'after=steps; path=/'"}]`, false)
		if res.GetWithheld() != nil || posts.Load() != 1 {
			t.Fatalf("withheld %v, %d posts; want the form sent once", res.GetWithheld(), posts.Load())
		}
		found := false
		for _, c := range res.GetCookiesAfter() {
			found = found || (c.GetName() == "after" && c.GetValue() == "steps")
		}
		if !found {
			t.Errorf("cookies after the steps = %v, want the one a step set", res.GetCookiesAfter())
		}
	})
}
