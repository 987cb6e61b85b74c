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
	"sync/atomic"
	"testing"

	"distill.dev/services/renderer/render"
)

// moreSite serves a list that grows by two items per click on "more", and
// a sign-in whose posts it counts in logins.
func moreSite(t *testing.T) (srv *httptest.Server, logins *atomic.Int32) {
	t.Helper()
	logins = new(atomic.Int32)
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
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html><head><title>Sign in</title></head><body><main><h1>Sign in</h1>
<p>Members of the harbour club sign in here to see the mooring list.</p>
<form method="post" action="/login"><input id="user" name="user"><button id="go">Sign in</button></form></main></body></html>`)
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		logins.Add(1)
		if r.FormValue("user") != "alice" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "club", Value: "alice-in", Path: "/", HttpOnly: true})
		http.Redirect(w, r, "/members", http.StatusSeeOther)
	})
	mux.HandleFunc("/members", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if c, err := r.Cookie("club"); err != nil || c.Value != "alice-in" {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `<!doctype html><title>Members only</title><p>Sign in first.</p>`)
			return
		}
		fmt.Fprint(w, `<!doctype html><html><head><title>Mooring list</title></head><body><main><h1>Mooring list</h1>
<p>Welcome back, alice. Your mooring is number twelve on the north pontoon, paid up until spring.</p></main></body></html>`)
	})
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, logins
}

// The screenshot tool and the reading tools' steps, through the official
// TypeScript client, in real Chromium.
func TestMCPBrowserToolsWithTypeScriptClient(t *testing.T) {
	t.Parallel()
	needNode(t)
	site, logins := moreSite(t)
	cfg := stdioConfig(t, site.URL)
	cfg.Pages["more"] = site.URL + "/more"
	cfg.Pages["login"] = site.URL + "/login"
	cfg.Pages["members"] = site.URL + "/members"
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

	checkAct(t, r, site.URL, logins.Load())
}

// checkAct judges the session_act calls: sign in by steps, withheld
// without confirm and sent once with it (logins: the sign-in posts the
// site got), the session keeping the cookie the sign-in set; then steps on
// another page of the session.
func checkAct(t *testing.T, r report, base string, logins int32) {
	t.Helper()
	decode := func(label string) map[string]any {
		t.Helper()
		o := r.Calls[label]
		if o.IsError || o.ProtocolError != "" || len(o.Texts) != 1 {
			t.Fatalf("%s failed: %+v", label, o)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(o.Texts[0]), &v); err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		return v
	}
	withheld := decode("act_withheld")
	ws, _ := withheld["would_send"].(map[string]any)
	if withheld["needs_confirmation"] != true || ws["method"] != "POST" || ws["url"] != base+"/login" ||
		ws["body"] != "user=alice" || ws["step_index"] != float64(1) || ws["selector"] != "#go" {
		t.Errorf("act without confirm = %v, want the sign-in POST of step 1 withheld", withheld)
	}
	if withheld["current_url"] != base+"/login" {
		t.Errorf("withheld act moved the session to %v", withheld["current_url"])
	}
	confirmed := decode("act_confirmed")
	if confirmed["current_url"] != base+"/members" || confirmed["needs_confirmation"] != nil {
		t.Errorf("confirmed act = %v, want the session on /members", confirmed)
	}
	if logins != 1 {
		t.Errorf("the site got %d sign-in posts, want exactly the confirmed one", logins)
	}
	members := decode("act_members")
	snap, _ := members["snapshot"].(map[string]any)
	if snap["status"] != float64(200) || !strings.Contains(fmt.Sprint(snap["markdown"]), "north pontoon") {
		t.Errorf("members after the act = %v, want the page the sign-in cookie opens", snap)
	}
	clicks := decode("act_clicks")
	steps, _ := clicks["steps"].([]any)
	snap, _ = clicks["snapshot"].(map[string]any)
	if len(steps) != 1 || steps[0].(map[string]any)["value"] != float64(6) || !strings.Contains(fmt.Sprint(snap["markdown"]), "Entry 4") {
		t.Errorf("act clicking more = steps %v, markdown %v", steps, snap["markdown"])
	}
}
