package rest_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"distill.dev/gateway/internal/localcluster"
)

// These tests drive `distill serve --http` with plain HTTP/JSON requests,
// as any client without gRPC would.

const (
	apiToken      = "rest-api-token-0123456789abcdef"
	operatorToken = "rest-operator-token-0123456789abc"
)

var words = strings.Repeat("The keeper lights the lamp at dusk and trims the wick at dawn. ", 12)

func site(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		// /chain/N links on to /chain/N+1: a crawl there does not end by
		// itself soon.
		next := ""
		if n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/chain/")); err == nil {
			next = fmt.Sprintf(`<a href="/chain/%d">next</a>`, n+1)
		}
		fmt.Fprintf(w, "<html><head><title>Lamp %s</title></head><body><main><h1>The lamp</h1><p>%s</p>%s</main></body></html>", r.URL.Path, words, next)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// serve runs the binary with the API and operator tokens and loopback
// allowed, and returns the HTTP API's base URL.
func serve(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin, built, err := localcluster.Distill(root, "distill-rest-test")
	if built != "" {
		t.Cleanup(func() { os.RemoveAll(built) })
	}
	if err != nil {
		t.Fatal(err)
	}
	srv, err := localcluster.StartServe(bin, t.TempDir(), "DISTILL_API_TOKENS="+apiToken, "DISTILL_OPERATOR_TOKENS="+operatorToken)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Stop()
		if t.Failed() {
			t.Logf("distill serve's stderr:\n%s", srv.Stderr())
		}
	})
	return srv.URL
}

type answer struct {
	status int
	body   map[string]any
	raw    string
}

func do(t *testing.T, method, url, token, contentType string, body string) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	a := answer{status: res.StatusCode, raw: string(raw)}
	_ = json.Unmarshal(raw, &a.body)
	return a
}

func TestREST(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the distill binary: make test runs it, make test-short does not")
	}
	pages := site(t)
	api := serve(t)
	call := func(method, path, token, body string) answer {
		t.Helper()
		return do(t, method, api+path, token, "application/json", body)
	}

	doc := call("GET", "/openapi.json", "", "")
	paths, _ := doc.body["paths"].(map[string]any)
	if doc.status != http.StatusOK || doc.body["swagger"] != "2.0" || paths["/api/v1/fetch"] == nil {
		t.Errorf("/openapi.json answered %d %.200s", doc.status, doc.raw)
	}

	a := call("POST", "/api/v1/fetch", apiToken, `{"url":"`+pages.URL+`/lamp","options":{"allow_local":true,"extract_links":true}}`)
	d, _ := a.body["distilled"].(map[string]any)
	if a.status != http.StatusOK || d["final_url"] != pages.URL+"/lamp" || d["title"] != "Lamp /lamp" || !strings.Contains(fmt.Sprint(d["markdown"]), "trims the wick") {
		t.Errorf("fetch answered %d %.300s", a.status, a.raw)
	}
	// The fields JSON spells as the proto does: finalUrl is not one.
	if _, camel := d["finalUrl"]; camel {
		t.Errorf("fetch answered camelCase fields: %.200s", a.raw)
	}

	for _, tc := range []struct {
		name, method, path, token, body string
		status                          int
		want                            string
	}{
		{"no token", "POST", "/api/v1/fetch", "", `{"url":"` + pages.URL + `/"}`, 401, "bearer token"},
		{"unknown field", "POST", "/api/v1/fetch", apiToken, `{"url":"` + pages.URL + `/","colour":"blue"}`, 400, "colour"},
		{"blocked", "POST", "/api/v1/fetch", apiToken, `{"url":"http://169.254.169.254/latest/"}`, 403, "169.254.169.254"},
		{"loopback without allow_local", "POST", "/api/v1/fetch", apiToken, `{"url":"` + pages.URL + `/"}`, 403, "127.0.0.1"},
		{"unknown crawl", "GET", "/api/v1/crawls/00000000000000ff", apiToken, "", 404, "no crawl"},
		{"cache clear needs an operator", "POST", "/api/v1/cache:clear", apiToken, `{}`, 403, "operator"},
		{"too large", "POST", "/api/v1/fetch", apiToken, `{"url":"` + strings.Repeat("a", 11<<20) + `"}`, 413, "over the limit of 10485760"},
	} {
		a := call(tc.method, tc.path, tc.token, tc.body)
		if msg, _ := a.body["message"].(string); a.status != tc.status || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: answered %d %.300s, want %d with a message containing %q", tc.name, a.status, a.raw, tc.status, tc.want)
		}
	}
	if a := call("GET", "/api/v1/cache", operatorToken, ""); a.status != http.StatusOK || a.body["entries"] == nil {
		t.Errorf("cache info answered %d %s", a.status, a.raw)
	}
	if a := call("POST", "/api/v1/cache:clear", operatorToken, `{}`); a.status != http.StatusOK {
		t.Errorf("cache clear with the operator's token answered %d %s", a.status, a.raw)
	}

	// The Firecrawl API shares the port and keeps its own paths.
	if a := call("POST", "/v2/scrape", apiToken, `{"url":"`+pages.URL+`/lamp"}`); a.status != http.StatusOK || a.body["success"] != true {
		t.Errorf("/v2/scrape beside the REST face answered %d %.200s", a.status, a.raw)
	}
}

// A streaming call over the Connect protocol, in JSON: each message a
// frame of a flag byte, a big-endian length and the JSON.
func TestConnectStream(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the distill binary: make test runs it, make test-short does not")
	}
	pages := site(t)
	api := serve(t)
	msg := []byte(`{"urls":["` + pages.URL + `/one","` + pages.URL + `/two"],"options":{"allow_local":true}}`)
	var frame bytes.Buffer
	frame.WriteByte(0)
	_ = binary.Write(&frame, binary.BigEndian, uint32(len(msg)))
	frame.Write(msg)
	req, err := http.NewRequestWithContext(t.Context(), "POST", api+"/distill.v1.DistillService/FetchBatch", &frame)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/connect+json")
	req.Header.Set("Authorization", "Bearer "+apiToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("FetchBatch answered %d %s", res.StatusCode, b)
	}
	r := bufio.NewReader(res.Body)
	titles := map[string]bool{}
	var end string
	for {
		var head [5]byte
		if _, err := io.ReadFull(r, head[:]); err != nil {
			t.Fatalf("reading a frame: %v", err)
		}
		body := make([]byte, binary.BigEndian.Uint32(head[1:]))
		if _, err := io.ReadFull(r, body); err != nil {
			t.Fatal(err)
		}
		if head[0]&2 != 0 { // the end of the stream
			end = string(body)
			break
		}
		var m struct {
			Result struct {
				Title string `json:"title"`
			} `json:"result"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("frame %s: %v", body, err)
		}
		titles[m.Result.Title] = true
	}
	if !titles["Lamp /one"] || !titles["Lamp /two"] || strings.Contains(end, "error") {
		t.Errorf("FetchBatch streamed %v, ending %s", titles, end)
	}
}

// streamLines reads a REST stream's lines as they come, each handed to
// line until it returns false.
func streamLines(t *testing.T, res *http.Response, line func(map[string]any) bool) {
	t.Helper()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("a line that is not JSON: %s", sc.Bytes())
		}
		if !line(m) {
			return
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

func post(t *testing.T, url, token, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

// The streaming calls over plain REST: one line of JSON for each message,
// read as it comes (a crawl's first line names the job the client then
// cancels), and a call refused before its first message answered as a
// unary call's refusal is. /openapi.json lists their paths.
func TestRESTStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the distill binary: make test runs it, make test-short does not")
	}
	pages := site(t)
	api := serve(t)

	doc := do(t, "GET", api+"/openapi.json", "", "", "")
	paths, _ := doc.body["paths"].(map[string]any)
	for _, p := range []string{"/api/v1/fetch:batch", "/api/v1/map", "/api/v1/crawls"} {
		if m, _ := paths[p].(map[string]any); m["post"] == nil {
			t.Errorf("/openapi.json has no POST %s", p)
		}
	}

	res := post(t, api+"/api/v1/fetch:batch", apiToken, `{"urls":["`+pages.URL+`/one","`+pages.URL+`/two"],"options":{"allow_local":true}}`)
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("fetch:batch answered %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	titles := map[string]bool{}
	streamLines(t, res, func(m map[string]any) bool {
		r, _ := m["result"].(map[string]any)
		d, _ := r["result"].(map[string]any)
		titles[fmt.Sprint(d["title"])] = true
		if m["error"] != nil {
			t.Errorf("fetch:batch ended with %v", m["error"])
		}
		return true
	})
	if !titles["Lamp /one"] || !titles["Lamp /two"] || len(titles) != 2 {
		t.Errorf("fetch:batch streamed %v", titles)
	}

	res = post(t, api+"/api/v1/map", apiToken, `{"url":"`+pages.URL+`/chain/1","allow_local":true,"map_pages":3,"delay_ms":0}`)
	var urls []string
	streamLines(t, res, func(m map[string]any) bool {
		r, _ := m["result"].(map[string]any)
		for _, u := range r["urls"].([]any) {
			urls = append(urls, u.(string))
		}
		return true
	})
	if res.StatusCode != http.StatusOK || !slices.Contains(urls, pages.URL+"/chain/2") {
		t.Errorf("map answered %d with %v", res.StatusCode, urls)
	}

	// A crawl that would go on: its first line names it, a cancel over
	// REST stops it, and its last line says so.
	res = post(t, api+"/api/v1/crawls", apiToken, `{"url":"`+pages.URL+`/chain/1","delay_ms":500,"concurrency":1,"depth":1000,"max_pages":40,"options":{"allow_local":true}}`)
	var id string
	var last map[string]any
	lines := 0
	streamLines(t, res, func(m map[string]any) bool {
		lines++
		r, _ := m["result"].(map[string]any)
		if id == "" {
			id, _ = r["job_id"].(string)
			if a := do(t, "POST", api+"/api/v1/crawls/"+id+":cancel", apiToken, "application/json", "{}"); a.status != http.StatusOK {
				t.Errorf("cancel answered %d %s", a.status, a.raw)
			}
		}
		last = r
		return true
	})
	summary, _ := last["summary"].(map[string]any)
	if id == "" || summary["state"] != "CRAWL_STATE_CANCELED" || lines > 10 {
		t.Errorf("crawl %q streamed %d lines, the last %v: want it canceled", id, lines, last)
	}

	for _, tc := range []struct {
		name, path, token, body string
		status                  int
		want                    string
	}{
		{"no token", "/api/v1/fetch:batch", "", `{"urls":["` + pages.URL + `/"]}`, 401, "bearer token"},
		{"unknown field", "/api/v1/map", apiToken, `{"url":"` + pages.URL + `/","colour":"blue"}`, 400, "colour"},
		{"bad request", "/api/v1/crawls", apiToken, `{"url":"` + pages.URL + `/","depth":-1}`, 400, "depth cannot be negative"},
		{"too large", "/api/v1/crawls", apiToken, `{"url":"` + strings.Repeat("a", 11<<20) + `"}`, 413, "over the limit of 10485760"},
	} {
		res := post(t, api+tc.path, tc.token, tc.body)
		raw, _ := io.ReadAll(res.Body)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		if msg, _ := m["message"].(string); res.StatusCode != tc.status || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: answered %d %.300s, want %d with a message containing %q", tc.name, res.StatusCode, raw, tc.status, tc.want)
		}
	}
}
