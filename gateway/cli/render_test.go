package cli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// appShell is an empty client-side app: its article exists only once its
// script has run.
const appShell = `<!doctype html><html><head><title>Tide tables</title></head><body>
<div id="root"></div>
<script>
setTimeout(function () {
  document.getElementById('root').innerHTML =
    '<article><h1>Tide tables</h1><p>High water at the harbour is at 06:42 and again at 19:05, ' +
    'with low water at 12:51. Spring tides this week bring the lowest water of the month, ' +
    'so the rock pools past the lifeboat station are open for most of the afternoon.</p></article>';
}, 200);
</script></body></html>`

func TestFetchRendersAnAppShell(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, appShell)
	}))
	defer srv.Close()

	t.Run("auto renders the empty shell", func(t *testing.T) {
		out, errOut, code := run(t, "fetch", "--allow-local", "--no-cache", "--diagnostics", srv.URL)
		if code != ExitOK {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		if !strings.Contains(out, "High water at the harbour is at 06:42") {
			t.Errorf("the script's article is missing:\n%s", out)
		}
		if !strings.Contains(errOut, "used_headless=true") {
			t.Errorf("diagnostics do not say the page was rendered: %q", errOut)
		}
	})
	t.Run("off keeps the page as fetched", func(t *testing.T) {
		out, errOut, code := run(t, "fetch", "--allow-local", "--no-cache", "--js", "off", srv.URL)
		if code != ExitOK {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		if strings.Contains(out, "High water") {
			t.Errorf("rendered although --js off:\n%s", out)
		}
	})
}

// scriptedNav is a readable page whose links and search form exist only
// once its script has run: the fetched HTML offers no action.
const scriptedNav = `<!doctype html><html><head><title>Harbour guide</title></head><body>
<main><h1>Harbour guide</h1>
<p>The harbour has moorings for forty boats, a fuel berth on the north quay and a slipway that
can be used two hours either side of high water. Visitors should call the harbour office on
channel 12 before entering, and keep to the buoyed channel: the sand bar shifts every winter.</p>
<nav id="nav"></nav></main>
<script>
document.getElementById('nav').innerHTML =
  '<a href="/moorings">Moorings</a> <a href="/tides">Tides</a>' +
  '<form action="/search"><input name="q"><button>Search</button></form>';
</script></body></html>`

func TestFetchRendersForActions(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, scriptedNav)
	}))
	defer srv.Close()

	t.Run("actions asked: the scripted links are found", func(t *testing.T) {
		out, errOut, code := run(t, "fetch", "--allow-local", "--no-cache", "--actions", "--diagnostics", "--format", "json", srv.URL)
		if code != ExitOK {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		for _, want := range []string{`/moorings"`, `"form_0"`, `"used_headless": true`} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %s:\n%s", want, out)
			}
		}
	})
	t.Run("actions not asked: the readable page is not rendered", func(t *testing.T) {
		out, errOut, code := run(t, "fetch", "--allow-local", "--no-cache", "--diagnostics", "--format", "json", srv.URL)
		if code != ExitOK {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		if !strings.Contains(out, `"used_headless": false`) {
			t.Errorf("rendered although nothing called for it:\n%s", out)
		}
	})
}
