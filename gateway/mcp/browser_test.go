package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"distill.dev/services/renderer/render"
)

// moreSite serves a list that grows by two items per click on "more".
func moreSite(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/more", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html><head><title>Harbour log</title></head><body><main><h1>Harbour log</h1><ol id="log"></ol>
<button id="more">more</button></main><script>
let n = 0;
more.onclick = () => fetch('/items?n=' + n).then(r => r.json()).then(rows => {
  for (const r of rows) { const li = document.createElement('li'); li.textContent = r; log.append(li); }
  n += rows.length;
});
</script></body></html>`)
	})
	mux.HandleFunc("/items", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		n := r.URL.Query().Get("n")
		fmt.Fprintf(w, `["Entry %s: the ferry left on the morning tide with forty passengers aboard.", "Entry %s+1: a fishing boat came in with the catch of the night."]`, n, n)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// The screenshot tool and the reading tools' steps, through the official
// TypeScript client, in real Chromium.
func TestMCPBrowserToolsWithTypeScriptClient(t *testing.T) {
	t.Parallel()
	needNode(t)
	site := moreSite(t)
	cfg := stdioConfig(t, site.URL)
	cfg.Pages["more"] = site.URL + "/more"
	cfg.Browser = true
	r := runClient(t, cfg)

	image := func(label, mime string) image.Image {
		t.Helper()
		o := r.Calls[label]
		if o.IsError || o.ProtocolError != "" || len(o.Blocks) != 2 || o.Blocks[0].Type != "image" || o.Blocks[0].MimeType != mime {
			t.Fatalf("%s = %+v, want an %s image block and a text", label, o, mime)
		}
		b, err := base64.StdEncoding.DecodeString(o.Blocks[0].Data)
		if err != nil {
			t.Fatal(err)
		}
		decode := png.Decode
		if mime == "image/jpeg" {
			decode = jpeg.Decode
		}
		img, err := decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		if !strings.Contains(o.Texts[0], site.URL+"/more") {
			t.Errorf("%s text = %q, want the page's URL", label, o.Texts[0])
		}
		return img
	}
	if b := image("screenshot_png", "image/png").Bounds(); b.Dx() != render.ViewportWidth || b.Dy() != render.ViewportHeight {
		t.Errorf("viewport screenshot is %v", b)
	}
	if b := image("screenshot_full_jpeg", "image/jpeg").Bounds(); b.Dx() > render.ViewportWidth || b.Dy() > render.MaxShotHeight {
		t.Errorf("full-page screenshot is %v", b)
	}

	if o := r.Calls["screenshot_pdf"]; o.IsError || len(o.Blocks) != 2 || o.Blocks[1].Type != "resource" || o.Blocks[1].MimeType != "application/pdf" {
		t.Errorf("screenshot format=pdf = %+v, want a text and an application/pdf resource", o)
	} else if b, err := base64.StdEncoding.DecodeString(o.Blocks[1].Data); err != nil || !bytes.HasPrefix(b, []byte("%PDF-")) {
		t.Errorf("the resource is not a PDF (%v)", err)
	}

	o := r.Calls["fetch_steps"]
	if o.IsError || len(o.Texts) != 2 {
		t.Fatalf("fetch_url with steps = %+v, want the page and a block of what the steps returned", o)
	}
	if !strings.Contains(o.Texts[0], "Entry 4: the ferry") {
		t.Errorf("the page lacks what three clicks loaded:\n%s", o.Texts[0])
	}
	var work struct {
		Steps []struct {
			Index int             `json:"index"`
			Value json.RawMessage `json:"value"`
		} `json:"steps"`
		Network struct {
			Responses []struct {
				URL  string `json:"url"`
				Body string `json:"body"`
			} `json:"responses"`
		} `json:"network"`
	}
	if err := json.Unmarshal([]byte(o.Texts[1]), &work); err != nil {
		t.Fatalf("%v: %s", err, o.Texts[1])
	}
	if len(work.Steps) != 1 || work.Steps[0].Index != 1 || string(work.Steps[0].Value) != "6" {
		t.Errorf("steps = %s, want step 1's count of 6 items", o.Texts[1])
	}
	if len(work.Network.Responses) != 3 || !strings.Contains(work.Network.Responses[2].Body, "Entry 4") {
		t.Errorf("network = %s, want the three answers of /items", o.Texts[1])
	}

	if o := r.Calls["fetch_step_fails"]; !o.IsError || len(o.Texts) != 1 || !strings.Contains(o.Texts[0], `step 0 (waitForSelector "#never")`) {
		t.Errorf("a failing step = %+v, want a tool error naming step 0", o)
	}
}
