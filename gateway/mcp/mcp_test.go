package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"distill.dev/gateway/api"
	"distill.dev/gateway/app"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

const articleHTML = `<!doctype html>
<html lang="en"><head><title>Keeping the Lamp | Harbour Log</title>
<meta name="author" content="Ines Varga">
<meta name="description" content="A season's notes from the point light.">
</head><body>
<nav><a href="/fog">Fog signal</a> <a href="/a">Page a</a></nav>
<article>
<h1>Keeping the Lamp</h1>
<p>Every evening the keeper climbs ninety-one steps, trims the wick and winds the clockwork
that turns the lens. On clear nights the beam reaches the outer shoals.</p>
<h2>Nights lit</h2>
<table><thead><tr><th>Month</th><th>Nights lit</th></tr></thead>
<tbody><tr><td>October</td><td>31</td></tr><tr><td>November</td><td>30</td></tr></tbody></table>
<p>When the beam cannot cut through, the horn takes over; see <a href="/fog">the fog signal notes</a>.</p>
<form action="/search" method="get"><input name="q"><button>Search</button></form>
</article>
<footer>Harbour Log.</footer>
</body></html>`

const fogHTML = `<!doctype html><html><head><title>Fog Signal Notes</title></head><body><main>
<h1>Fog Signal Notes</h1><p>The horn sounds two blasts every minute while visibility stays under a mile,
and the keeper logs the hour it starts and stops. Last winter it ran for nineteen hours straight.</p>
<p><a href="/article">Back to the lamp</a></p></main></body></html>`

// orderHTML is a POST form with a checkbox group; the server rejects a
// quantity of 0 with rejectedHTML and a 422.
const orderHTML = `<!doctype html><html><head><title>Order a Lamp Wick</title></head><body><main>
<h1>Order a Lamp Wick</h1><p>Wicks are cut to length for the point light and sent with the next supply boat.</p>
<form action="/order" method="post"><input name="qty" value="0">
<label><input type="checkbox" name="extra" value="oil" checked> Oil</label>
<label><input type="checkbox" name="extra" value="trimmer"> Trimmer</label>
<label><input type="checkbox" name="extra" value="spare" checked> Spare</label>
<button>Order</button></form></main></body></html>`

const rejectedHTML = `<!doctype html><html><head><title>Order Not Placed</title></head><body><main>
<h1>Order Not Placed</h1><p>Quantity must be at least 1. Nothing was charged and the supply boat leaves on Friday.</p>
</main></body></html>`

// pages serves a small site on loopback: an article that links to a second
// page, two short pages, an order form, and one page far longer than the
// MCP output budget.
func pages(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	serve := func(path, body string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, body)
		})
	}
	serve("/article", articleHTML)
	for _, name := range []string{"grid", "docs", "wiki"} {
		serve("/"+name, fixture(t, name+".html"))
	}
	serve("/fog", fogHTML)
	serve("/brand", brandHTML)
	mux.HandleFunc("/brand.css", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		io.WriteString(w, brandCSS)
	})
	for _, name := range []string{"a", "b"} {
		serve("/"+name, fmt.Sprintf("<html><head><title>Page %s</title></head><body><main><h1>Page %s</h1>"+
			"<p>This is page %s, with enough words in it to count as content for a reader.</p></main></body></html>", name, name, name))
	}
	var long strings.Builder
	long.WriteString("<html><head><title>The Long Report</title></head><body><article><h1>The Long Report</h1>")
	for i := range 2500 {
		fmt.Fprintf(&long, "<p>Paragraph %d of the survey records tide heights, water temperature, and the count of anemones seen in pool %d.</p>", i, i%40)
	}
	long.WriteString("</article></body></html>")
	serve("/long", long.String())
	serve("GET /order", orderHTML)
	mux.HandleFunc("POST /order", func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("qty") == "0" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusUnprocessableEntity)
			io.WriteString(w, rejectedHTML)
			return
		}
		http.Redirect(w, r, "/a", http.StatusSeeOther)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// fixture is one of the pick package's fixture pages: a product grid, a
// docs page with code and tables, a wiki-like page with many links.
func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "services", "extractor", "pick", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// newService is distill in one process, as `distill mcp` runs it.
func newService(t *testing.T) *api.Server {
	t.Helper()
	a, err := app.Open(t.Context(), quiet, app.Config{UserAgentVersion: "test", Workers: 4, CacheDir: t.TempDir(), AllowLocal: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return api.New(quiet, a)
}

// connect returns an SDK client session to a server over svc, in memory.
func connect(t *testing.T, svc Service) *mcpsdk.ClientSession {
	t.Helper()
	return connectTo(t, New(quiet, svc, "test"))
}

// connectTo is connect for any of the servers: distill's or host mode's.
func connectTo(t *testing.T, srv *Server) *mcpsdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	serverT, clientT := mcpsdk.NewInMemoryTransports()
	ss, err := srv.sdk.Connect(ctx, serverT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "test"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and returns its text blocks and whether it is a tool
// error; a protocol error fails the test.
func call(t *testing.T, cs *mcpsdk.ClientSession, name string, args map[string]any) (texts []string, isError bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	for _, c := range res.Content {
		tc, ok := c.(*mcpsdk.TextContent)
		if !ok {
			t.Fatalf("%s: content %T, want text", name, c)
		}
		texts = append(texts, tc.Text)
	}
	return texts, res.IsError
}

// callOK calls a tool that must succeed with one text block, and returns it.
func callOK(t *testing.T, cs *mcpsdk.ClientSession, name string, args map[string]any) string {
	t.Helper()
	texts, isError := call(t, cs, name, args)
	if isError || len(texts) != 1 {
		t.Fatalf("%s(%v) = %q (error %t), want one text block", name, args, texts, isError)
	}
	return texts[0]
}

// callJSON calls a tool that must succeed with JSON, and decodes it.
func callJSON[T any](t *testing.T, cs *mcpsdk.ClientSession, name string, args map[string]any) T {
	t.Helper()
	text := callOK(t, cs, name, args)
	var v T
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("%s: result is not JSON: %v\n%s", name, err, text)
	}
	return v
}

// callError calls a tool that must fail with a tool error, and returns its
// message.
func callError(t *testing.T, cs *mcpsdk.ClientSession, name string, args map[string]any) string {
	t.Helper()
	texts, isError := call(t, cs, name, args)
	if !isError || len(texts) != 1 {
		t.Fatalf("%s(%v) = %q (error %t), want a tool error", name, args, texts, isError)
	}
	if strings.Contains(texts[0], "\n") {
		t.Errorf("%s: error spans lines: %q", name, texts[0])
	}
	return texts[0]
}
