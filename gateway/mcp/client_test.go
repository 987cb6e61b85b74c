package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"distill.dev/gateway/internal/localcluster"
	"distill.dev/services/platform/envflag"
)

// These tests run the distill binary: the one in the folder
// localcluster.BinEnv names, where make builds it once per run, or one
// they build. Some run it under the official MCP TypeScript SDK
// (testdata/client), a client nobody here wrote; they need node and npm,
// and are skipped in short mode. `make mcp-client` installs the client's
// pinned packages, and the tests run `npm ci` themselves when node_modules
// is missing.

const clientDir = "testdata/client"

// built is the folder of a binary built for this package's tests, which
// TestMain removes.
var built string

func TestMain(m *testing.M) {
	code := m.Run()
	if built != "" {
		os.RemoveAll(built)
	}
	os.Exit(code)
}

var (
	binaryOnce = sync.OnceValues(func() (string, error) {
		root, err := filepath.Abs("../..")
		if err != nil {
			return "", err
		}
		bin, dir, err := localcluster.Distill(root, "distill-mcp-test")
		built = dir
		return bin, err
	})
	npmOnce = sync.OnceValue(func() error { return localcluster.NPMInstall(clientDir) })
)

// distillBinary is the distill command, built once for the package's
// tests.
func distillBinary(t *testing.T) string {
	t.Helper()
	bin, err := binaryOnce()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// needNode skips the test in short mode, and makes sure the TypeScript
// client can run.
func needNode(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the TypeScript MCP client under Node: make test runs it, make test-short does not")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not installed: install nodejs and npm (.ci/run does), then run make mcp-client")
	}
	if err := npmOnce(); err != nil {
		t.Fatal(err)
	}
}

// clientConfig is what client.mjs takes.
type clientConfig struct {
	Transport string            `json:"transport"`
	Command   string            `json:"command,omitempty"`
	Args      []string          `json:"args,omitempty"`
	URL       string            `json:"url,omitempty"`
	Token     string            `json:"token,omitempty"`
	Pages     map[string]string `json:"pages"`
	Sessions  bool              `json:"sessions"`
	Browser   bool              `json:"browser"`
	Host      bool              `json:"host,omitempty"`
	Reading   bool              `json:"reading"`
}

type outcome struct {
	IsError       bool     `json:"isError"`
	Texts         []string `json:"texts"`
	ProtocolError string   `json:"protocolError"`
	// Blocks are every content block: type, MIME type and base64 data.
	Blocks []struct {
		Type     string `json:"type"`
		MimeType string `json:"mimeType"`
		Data     string `json:"data"`
	} `json:"blocks"`
}

type report struct {
	Tools []struct {
		Name     string   `json:"name"`
		Params   []string `json:"params"`
		Required []string `json:"required"`
		// The annotations a client decides by whether to ask its user.
		ReadOnly    bool   `json:"readOnly"`
		Destructive bool   `json:"destructive"`
		Title       string `json:"title"`
	} `json:"tools"`
	Calls map[string]outcome `json:"calls"`
}

// runClient runs client.mjs and returns its report.
func runClient(t *testing.T, cfg clientConfig) report {
	t.Helper()
	needNode(t)
	arg, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// A bound on a hung client, not a synchronisation.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "client.mjs", string(arg))
	cmd.Dir = clientDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node client (%s): %v\nstderr:\n%s", cfg.Transport, err, stderr.String())
	}
	var r report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("client report: %v\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	return r
}

// sitePages names the test site's pages for the client.
func sitePages(base string) map[string]string {
	return map[string]string{"article": base + "/article", "a": base + "/a", "b": base + "/b", "order": base + "/order", "grid": base + "/grid", "brand": base + "/brand"}
}

func stdioConfig(t *testing.T, base string) clientConfig {
	return clientConfig{
		Transport: "stdio",
		Command:   distillBinary(t),
		Args:      []string{"--cache-dir", t.TempDir(), "mcp", "--allow-local"},
		Pages:     sitePages(base),
	}
}

func TestMCPWithTypeScriptClient(t *testing.T) {
	t.Parallel()
	needNode(t)
	site := pages(t)
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		checkReport(t, runClient(t, stdioConfig(t, site.URL)), site.URL)
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		const token = "test-token-7f3a"
		url, stop := startHTTP(t, token, "--allow-local")
		checkReport(t, runClient(t, clientConfig{Transport: "http", URL: url, Token: token, Pages: sitePages(site.URL)}), site.URL)
		stop()
	})
}

// checkReport judges the calls every client run makes.
func checkReport(t *testing.T, r report, base string) {
	t.Helper()
	listed := map[string][]string{}
	for _, tool := range r.Tools {
		listed[tool.Name] = tool.Params
	}
	for name, params := range plainTools() {
		got, ok := listed[name]
		if !ok {
			t.Errorf("the client does not see %s", name)
		}
		for _, p := range params {
			if ok && !slices.Contains(got, p.name) {
				t.Errorf("the client sees no %s.%s", name, p.name)
			}
		}
	}

	text := func(label string) string {
		o := r.Calls[label]
		if o.IsError || o.ProtocolError != "" || len(o.Texts) == 0 {
			t.Errorf("%s failed: %+v", label, o)
			return ""
		}
		return o.Texts[0]
	}
	if md := text("fetch_markdown"); !strings.Contains(md, "# Keeping the Lamp") {
		t.Errorf("fetch_url markdown:\n%s", md)
	}

	var p page
	if err := json.Unmarshal([]byte(text("fetch_json_as_strings")), &p); err != nil {
		t.Errorf("fetch_url format=json: %v", err)
	}
	if p.FinalURL != base+"/article" || p.Stats == nil || p.Stats.OutputTokens > 50 {
		t.Errorf("fetch_url with string arguments = %+v, want the article with stats, within 50 tokens", p)
	}

	var o page
	if err := json.Unmarshal([]byte(text("observe")), &o); err != nil {
		t.Errorf("observe_url: %v", err)
	}
	if o.Actions == nil || len(o.Actions.Links) == 0 || o.Actions.Links[0].ActionID != "link_0" || o.Diagnostics == nil {
		t.Errorf("observe_url = %+v, want actions from link_0 and diagnostics", o)
	}

	var batch []struct {
		URL string `json:"url"`
		OK  bool   `json:"ok"`
	}
	if err := json.Unmarshal([]byte(text("batch")), &batch); err != nil {
		t.Errorf("fetch_urls: %v", err)
	}
	wantBatch := []string{base + "/a", "http://10.0.0.1/", base + "/b"}
	if len(batch) != 3 || !batch[0].OK || batch[1].OK || !batch[2].OK {
		t.Errorf("fetch_urls = %+v, want ok, failed, ok", batch)
	}
	for i := range min(len(batch), len(wantBatch)) {
		if batch[i].URL != wantBatch[i] {
			t.Errorf("fetch_urls item %d is %s, want %s", i, batch[i].URL, wantBatch[i])
		}
	}

	// The article links to the fog notes: the short crawl finds them and
	// stops looking at map_limit, given as a string.
	if m := r.Calls["map"]; m.IsError || len(m.Texts) != 2 || m.Texts[0] != base+"/article\n"+base+"/fog\n" ||
		!strings.Contains(m.Texts[1], "The map stopped looking at map_limit=2 URLs") {
		t.Errorf("map = %+v, want /article and /fog and a report that it stopped at map_limit", m)
	}

	// select: records from the product grid, every title like one found
	// by its text, an XPath count, and an XPath that does not parse.
	if got, want := text("select_records"), `[{"title":"Tide Pools of the North","price":"£51.77"},{"title":"Kelp Forests","price":"£23.10"},`+
		`{"title":"Anemones, a Life in the Shallows","price":"£57.25"},{"title":"Shore Birds","price":"£9.99"}]`; got != want {
		t.Errorf("select records = %s, want %s", got, want)
	}
	var similar struct {
		Selector string `json:"selector"`
		Matches  []struct {
			Selector string `json:"selector"`
			Text     string `json:"text"`
		} `json:"matches"`
	}
	if err := json.Unmarshal([]byte(text("select_similar")), &similar); err != nil || similar.Selector != "h3 > a" || len(similar.Matches) != 4 ||
		similar.Matches[1].Text != "Kelp Forests" || similar.Matches[1].Selector != "#catalogue > ol > li:nth-of-type(2) > article > h3 > a" {
		t.Errorf("select similar = %+v (%v), want the four titles and h3 > a", similar, err)
	}
	if got := text("select_count"); got != "4" {
		t.Errorf("select xpath count = %s, want 4", got)
	}
	if bad := r.Calls["select_bad"]; !bad.IsError || len(bad.Texts) != 1 || !strings.Contains(bad.Texts[0], `xpath: invalid XPath "//article["`) {
		t.Errorf("select with a broken XPath = %+v, want a tool error naming it", bad)
	}

	// The article links to the fog notes, in words the query holds: a
	// crawl of two pages reads them second, rated, and says where it
	// stopped.
	if c := r.Calls["crawl"]; c.IsError || len(c.Texts) != 3 || !strings.HasPrefix(c.Texts[0], "==> "+base+"/article <== (depth 0, relevance ") ||
		!strings.HasPrefix(c.Texts[1], "==> "+base+"/fog <== (depth 1, relevance ") || !strings.Contains(c.Texts[2], "Stopped at max_pages=2") {
		t.Errorf("crawl = %+v, want /article, then /fog, then a report that it stopped at max_pages", c)
	}

	if bad := r.Calls["bad_param"]; !bad.IsError || len(bad.Texts) != 1 || !strings.Contains(bad.Texts[0], "timeout_secs") {
		t.Errorf("bad argument = %+v, want a tool error naming timeout_secs", bad)
	}
	if unknown := r.Calls["unknown_tool"]; unknown.ProtocolError == "" {
		t.Errorf("unknown tool = %+v, want a protocol error", unknown)
	}
}

// startHTTP runs `distill mcp --http` on a free loopback port and returns
// its endpoint, read from the line the command prints once it listens, and
// a function that stops it with SIGINT and checks it exits cleanly. flags
// are added to the command's.
func startHTTP(t *testing.T, token string, flags ...string) (endpoint string, stop func()) {
	t.Helper()
	args := append([]string{"--cache-dir", t.TempDir(), "mcp"}, flags...)
	if !slices.Contains(flags, "--http") {
		args = append(args, "--http", "127.0.0.1:0")
	}
	cmd := exec.Command(distillBinary(t), args...)
	cmd.Env = append(os.Environ(), string(envflag.MCPToken)+"="+token)
	// stderr goes through a pipe read to the end, so that waiting for the
	// process never waits on the reader.
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	served := make(chan string, 1)
	var stderr strings.Builder
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		lines := bufio.NewScanner(pr)
		for lines.Scan() {
			if ep, ok := strings.CutPrefix(lines.Text(), "distill mcp: serving "); ok {
				served <- ep
				continue
			}
			stderr.WriteString(lines.Text() + "\n")
		}
		io.Copy(io.Discard, pr)
	}()
	exited := start(t, cmd, pw)
	select {
	case endpoint = <-served:
	case err := <-exited:
		<-drained
		t.Fatalf("distill mcp --http exited without serving: %v\n%s", err, stderr.String())
	}
	stop = func() {
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		err := waitExit(t, exited)
		<-drained
		if err != nil {
			t.Errorf("distill mcp --http on SIGINT: %v\nstderr:\n%s", err, stderr.String())
		}
	}
	return endpoint, stop
}

// start starts cmd and returns its exit, once it comes; then closes
// stderr, when given.
func start(t *testing.T, cmd *exec.Cmd, stderr io.Closer) <-chan error {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	exited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		if stderr != nil {
			stderr.Close()
		}
		exited <- err
	}()
	return exited
}

// waitExit returns the exit of a stopped distill, and fails the test when
// it does not come within a bound far above a clean stop's.
func waitExit(t *testing.T, exited <-chan error) error {
	t.Helper()
	select {
	case err := <-exited:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("distill is still running after being stopped")
		return nil
	}
}

func TestMCPHTTPRefusesToStartWithoutAToken(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(distillBinary(t), "mcp", "--http", "127.0.0.1:0")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, string(envflag.MCPToken)+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); !ok {
		t.Fatalf("distill mcp --http without a token: %v, want a non-zero exit", err)
	}
	msg := strings.TrimSuffix(stderr.String(), "\n")
	if strings.Contains(msg, "\n") || !strings.Contains(msg, string(envflag.MCPToken)) || !strings.Contains(msg, "--no-auth") {
		t.Errorf("stderr = %q, want one line naming %s and --no-auth", stderr.String(), string(envflag.MCPToken))
	}
}

// TestMCPSessionsOverStdio browses with the session tools through the
// TypeScript client: start on the article, follow link_0 to the fog signal
// notes, close, and find the session gone; then order through a form the
// server first rejects.
func TestMCPSessionsOverStdio(t *testing.T) {
	t.Parallel()
	needNode(t)
	site := pages(t)
	cfg := stdioConfig(t, site.URL)
	cfg.Sessions = true
	r := runClient(t, cfg)

	type view struct {
		SessionID  string `json:"session_id"`
		CurrentURL string `json:"current_url"`
		Snapshot   *page  `json:"snapshot"`
		Loop       *struct {
			AvailableActions []struct {
				ActionID string `json:"action_id"`
			} `json:"available_actions"`
		} `json:"loop"`
	}
	decode := func(label string) view {
		t.Helper()
		o := r.Calls[label]
		if o.IsError || o.ProtocolError != "" || len(o.Texts) != 1 {
			t.Fatalf("%s failed: %+v", label, o)
		}
		var v view
		if err := json.Unmarshal([]byte(o.Texts[0]), &v); err != nil {
			t.Fatalf("%s: %v\n%s", label, err, o.Texts[0])
		}
		return v
	}

	start := decode("session_start")
	if start.SessionID == "" || start.CurrentURL != site.URL+"/article" || start.Snapshot == nil || start.Snapshot.Title != "Keeping the Lamp" {
		t.Errorf("session_start = %+v, want a session on the article", start)
	}
	if start.Loop == nil || len(start.Loop.AvailableActions) == 0 || start.Loop.AvailableActions[0].ActionID != "link_0" {
		t.Errorf("session_start loop = %+v, want available actions from link_0", start.Loop)
	}
	follow := decode("session_follow")
	if follow.SessionID != start.SessionID || follow.CurrentURL != site.URL+"/fog" || follow.Snapshot == nil || follow.Snapshot.Title != "Fog Signal Notes" {
		t.Errorf("session_follow link_0 = %+v, want the fog signal notes in the same session", follow)
	}
	var closed struct {
		SessionID string `json:"session_id"`
		Closed    bool   `json:"closed"`
	}
	if o := r.Calls["session_close"]; len(o.Texts) != 1 || json.Unmarshal([]byte(o.Texts[0]), &closed) != nil || !closed.Closed || closed.SessionID != start.SessionID {
		t.Errorf("session_close = %+v, want {session_id, closed: true}", o)
	}
	if o := r.Calls["session_follow_closed"]; !o.IsError || len(o.Texts) != 1 || !strings.Contains(o.Texts[0], "session_start") {
		t.Errorf("following in a closed session = %+v, want a tool error pointing to session_start", o)
	}

	order := func(label string) sessionJSON {
		t.Helper()
		o := r.Calls[label]
		if o.IsError || o.ProtocolError != "" || len(o.Texts) != 1 {
			t.Fatalf("%s failed: %+v", label, o)
		}
		var v sessionJSON
		if err := json.Unmarshal([]byte(o.Texts[0]), &v); err != nil {
			t.Fatalf("%s: %v\n%s", label, err, o.Texts[0])
		}
		return v
	}
	checkOrderSession(t, site.URL, order("order_start"), order("order_withheld"), order("order_rejected"), order("order_placed"))
}

// TestMCPStdioStops checks `distill mcp` exits cleanly when its client
// hangs up and when it is interrupted while waiting for input.
func TestMCPStdioStops(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		stop func(cmd *exec.Cmd, stdin io.Closer) error
	}{
		{name: "stdin closed", stop: func(_ *exec.Cmd, stdin io.Closer) error { return stdin.Close() }},
		{name: "SIGINT", stop: func(cmd *exec.Cmd, _ io.Closer) error { return cmd.Process.Signal(os.Interrupt) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(distillBinary(t), "--cache-dir", t.TempDir(), "mcp")
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			exited := start(t, cmd, nil)
			// An answered initialize shows the server is up and reading.
			if _, err := io.WriteString(stdin, initialize+"\n"); err != nil {
				t.Fatal(err)
			}
			answer, err := bufio.NewReader(stdout).ReadString('\n')
			if err != nil || !strings.Contains(answer, `"serverInfo":{"name":"distill"`) {
				t.Fatalf("initialize answered %q, %v", answer, err)
			}
			if err := tt.stop(cmd, stdin); err != nil {
				t.Fatal(err)
			}
			if err := waitExit(t, exited); err != nil {
				t.Errorf("distill mcp: %v, want a clean exit", err)
			}
		})
	}
}
