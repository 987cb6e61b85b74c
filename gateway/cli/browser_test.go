package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestBrowserFlagsMapToOptions(t *testing.T) {
	steps := filepath.Join(t.TempDir(), "steps.json")
	if err := os.WriteFile(steps, []byte(`[{"type":"click","selector":"#more","repeat":3}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	options := func(t *testing.T, args ...string) (*fetchFlags, *pflag.FlagSet) {
		f := &fetchFlags{}
		fs := pflag.NewFlagSet("fetch", pflag.ContinueOnError)
		f.register(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return f, fs
	}
	f, fs := options(t, "--steps", "@"+steps, "--scroll", "--screenshot", "--pdf", "--capture-network", "--block", "images,fonts")
	if err := f.browser.load(); err != nil {
		t.Fatal(err)
	}
	o := f.options(fs)
	if !strings.Contains(o.GetSteps(), `"#more"`) || o.GetScroll() != 20 || o.GetScreenshot() != "viewport" || !o.GetPdf() ||
		o.CaptureNetwork == nil || o.GetCaptureNetwork() != "" || strings.Join(o.GetBlock(), ",") != "images,fonts" {
		t.Errorf("options = %v", o)
	}
	f, fs = options(t, "--scroll=3", "--screenshot=full", "--screenshot-format", "jpeg", "--capture-network=api/", "--capture-types", "document,xhr")
	o = f.options(fs)
	if o.GetScroll() != 3 || o.GetScreenshot() != "full" || o.GetScreenshotFormat() != "jpeg" || o.GetCaptureNetwork() != "api/" ||
		strings.Join(o.GetCaptureTypes(), ",") != "document,xhr" {
		t.Errorf("options = %v", o)
	}
	f, fs = options(t)
	if o = f.options(fs); o.Scroll != nil || o.CaptureNetwork != nil || o.GetScreenshot() != "" || o.GetScreenshotFormat() != "" {
		t.Errorf("browser options set without their flags: %v", o)
	}
}

// --screenshot takes its kind as the next argument too, as in
// `--screenshot full URL`, though pflag's optional values need `=`.
func TestScreenshotKindAsAnArgument(t *testing.T) {
	for _, tt := range []struct {
		args []string
		kind string
		rest []string
	}{
		{[]string{"--screenshot", "full", "https://a.example/"}, "full", []string{"https://a.example/"}},
		{[]string{"https://a.example/", "--screenshot", "viewport"}, "viewport", []string{"https://a.example/"}},
		{[]string{"--screenshot", "https://a.example/"}, "viewport", []string{"https://a.example/"}},
		{[]string{"--screenshot=full", "https://a.example/"}, "full", []string{"https://a.example/"}},
		{[]string{"https://a.example/"}, "", []string{"https://a.example/"}},
	} {
		f := &fetchFlags{}
		fs := pflag.NewFlagSet("fetch", pflag.ContinueOnError)
		f.register(fs)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		rest := f.browser.screenshotKind(fs, fs.Args())
		if got := f.options(fs).GetScreenshot(); got != tt.kind || strings.Join(rest, " ") != strings.Join(tt.rest, " ") {
			t.Errorf("%v: screenshot %q, args %v; want %q, %v", tt.args, got, rest, tt.kind, tt.rest)
		}
	}
}

func TestBrowserFlagsRefusedBeforeFetching(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--screenshot"}, "need -o FILE"},
		{[]string{"--pdf", "--mhtml", "-o", "x"}, "-o FILE takes one of"},
		{[]string{"--capture-network"}, "--capture-network needs --format json"},
		{[]string{"--steps", `[{"type":"hover"}]`}, "--steps: step 0 (hover): unknown type"},
		{[]string{"--steps", "@/no/such/file"}, "--steps: open /no/such/file"},
		{[]string{"--block", "scripts"}, `--block: unknown kind "scripts"`},
		{[]string{"--screenshot=page"}, "must be one of viewport, full"},
		{[]string{"--pdf", "--js", "off", "--format", "json"}, "--js off leaves no browser"},
	} {
		_, errOut, code := run(t, append(append([]string{"fetch"}, tt.args...), "http://127.0.0.1:1/")...)
		if code != ExitUsage || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want a usage error saying %q", tt.args, code, errOut, tt.want)
		}
	}
}

// End to end in this process, in real Chromium: steps load more, the
// screenshot goes to -o FILE, and the capture comes back in the JSON.
func TestFetchRunsStepsAndWritesTheScreenshot(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><html><head><title>Catch log</title></head><body><main><h1>Catch log</h1><ol id="log"></ol>
<button id="more">more</button></main><script>
let n = 0;
more.onclick = () => fetch('/api?n=' + n).then(r => r.json()).then(rows => { for (const r of rows) { const li = document.createElement('li'); li.textContent = r; log.append(li); } n += rows.length; });
</script></body></html>`)
	})
	mux.HandleFunc("/api", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		n := r.URL.Query().Get("n")
		fmt.Fprintf(w, `["Mackerel landed at the north quay, batch %s, forty boxes sold at the morning auction.", "Sea bass from the estuary nets, batch %s, twelve boxes held for the evening market."]`, n, n)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	shot := filepath.Join(t.TempDir(), "page.png")
	out, errOut, code := run(t, "fetch", "--allow-local", "--no-cache", "--format", "json", "--diagnostics",
		"--steps", `[{"type":"click","selector":"#more","repeat":2},{"type":"executeJavascript","script":"document.querySelectorAll('li').length"}]`,
		"--capture-network=api", "--screenshot", "-o", shot, srv.URL)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var page struct {
		Markdown    string                                           `json:"markdown"`
		Screenshot  []byte                                           `json:"screenshot"`
		Steps       []struct{ Value json.RawMessage }                `json:"steps"`
		Network     struct{ Responses []struct{ URL, Body string } } `json:"network"`
		Diagnostics struct {
			StepsRun int `json:"steps_run"`
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal([]byte(out), &page); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if !strings.Contains(page.Markdown, "batch 0") || !strings.Contains(page.Markdown, "batch 2") {
		t.Errorf("markdown lacks what the clicks loaded:\n%s", page.Markdown)
	}
	if len(page.Steps) != 1 || string(page.Steps[0].Value) != "4" || page.Diagnostics.StepsRun != 2 {
		t.Errorf("steps = %s, steps_run %d; want the script's 4 and 2 steps", out, page.Diagnostics.StepsRun)
	}
	if len(page.Network.Responses) != 2 || !strings.Contains(page.Network.Responses[0].Body, "Mackerel") {
		t.Errorf("captured %+v, want the two API answers", page.Network.Responses)
	}
	if page.Screenshot != nil {
		t.Errorf("the screenshot written to -o is in the JSON too")
	}
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(b)); err != nil {
		t.Errorf("-o file is not a PNG: %v", err)
	}
}
