package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"distill.dev/gateway/cli"
	"distill.dev/gateway/mcp"
	"distill.dev/gateway/output"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/envflag"
)

// reach says where one field of distillv1.FetchOptions meets the public
// surface. options.proto names the fields as the MCP parameters, so the
// parameter is the field's name.
type reach struct {
	// flag is the `distill fetch` argument that sets the field to want.
	flag string
	// tool is the MCP tool that takes the parameter; param is the value
	// sent, which must set the field to want too.
	tool  string
	param any
	want  protoreflect.Value
	// json is the key of the public JSON that carries the part of the page
	// the option asks for; empty for options that shape how a page is
	// fetched or cut rather than add a part to it.
	json string
	// internal, when set, says why the field is deliberately kept off the
	// public surface; the other fields are then left empty.
	internal string
	// group names options that cannot share a call with the others (one
	// picker a call): each group reaches the doors in calls of its own.
	group string
	// file, when set, is written to a file whose path ends flag.
	file string
	// implied says the tool sets the field itself: it is called without
	// a parameter for it.
	implied bool
	// noTool, when set, says why the field is a flag but no MCP
	// parameter yet; tool and param are then left empty.
	noTool string
}

// oldPage is an earlier answer, as --diff-with reads it and the diff tool
// takes it.
const oldPage = `{"final_url":"http://127.0.0.1:1/page","status":200,"title":"Page","markdown":"# Page, before"}`

// fetchOptionsReach lists every field of FetchOptions. The values differ
// from the defaults, so a field left unset cannot pass for one that was
// set. format is json at both doors, so both answer with the public JSON.
var fetchOptionsReach = map[protoreflect.Name]reach{
	"format":               {flag: "--format=json", tool: "fetch_url", param: "json", want: enum(distillv1.Format_FORMAT_JSON)},
	"selector":             {flag: "--selector=main", tool: "fetch_url", param: "main", want: protoreflect.ValueOfString("main")},
	"profile":              {flag: "--profile=full", tool: "fetch_url", param: "full", want: enum(distillv1.Profile_PROFILE_FULL)},
	"stats":                {flag: "--stats", tool: "fetch_url", param: true, want: protoreflect.ValueOfBool(true), json: "stats"},
	"diagnostics":          {flag: "--diagnostics", tool: "fetch_url", param: true, want: protoreflect.ValueOfBool(true), json: "diagnostics"},
	"max_output_tokens":    {flag: "--max-output-tokens=7", tool: "fetch_url", param: 7, want: protoreflect.ValueOfInt64(7)},
	"timeout_secs":         {flag: "--timeout=9", tool: "fetch_url", param: 9, want: protoreflect.ValueOfInt32(9)},
	"max_bytes":            {flag: "--max-bytes=4096", tool: "fetch_url", param: 4096, want: protoreflect.ValueOfInt64(4096)},
	"no_cache":             {flag: "--no-cache", tool: "fetch_url", param: true, want: protoreflect.ValueOfBool(true)},
	"cache_ttl":            {flag: "--cache-ttl=60", tool: "fetch_url", param: 60, want: protoreflect.ValueOfInt64(60)},
	"extract_links":        {flag: "--links", tool: "fetch_url", param: true, want: protoreflect.ValueOfBool(true), json: "links"},
	"extract_tables":       {flag: "--tables", tool: "fetch_url", param: true, want: protoreflect.ValueOfBool(true), json: "tables"},
	"links_full":           {flag: "--links-all", tool: "fetch_url", param: true, want: protoreflect.ValueOfBool(true), json: "links"},
	"js":                   {flag: "--js=always", tool: "fetch_url", param: "always", want: enum(distillv1.JsMode_JS_MODE_ALWAYS)},
	"js_wait":              {flag: "--js-wait=1500", tool: "fetch_url", param: 1500, want: protoreflect.ValueOfInt32(1500)},
	"js_wait_for":          {flag: "--js-wait-for=#app", tool: "fetch_url", param: "#app", want: protoreflect.ValueOfString("#app")},
	"allow_local":          {flag: "--allow-local", tool: "fetch_url", param: true, want: protoreflect.ValueOfBool(true)},
	"max_retries":          {flag: "--max-retries=5", tool: "fetch_url", param: 5, want: protoreflect.ValueOfInt32(5)},
	"per_host_concurrency": {flag: "--per-host-concurrency=3", tool: "fetch_url", param: 3, want: protoreflect.ValueOfInt32(3)},
	"rate_limit":           {flag: "--rate-limit=2.5", tool: "fetch_url", param: 2.5, want: protoreflect.ValueOfFloat64(2.5)},
	"respect_robots":       {flag: "--respect-robots", tool: "fetch_url", param: true, want: protoreflect.ValueOfBool(true)},
	"extract_actions":      {flag: "--actions", tool: "fetch_url", param: true, want: protoreflect.ValueOfBool(true), json: "actions"},
	"max_actions":          {flag: "--max-actions=6", tool: "fetch_url", param: 6, want: protoreflect.ValueOfInt32(6)},
	"browser": {flag: "--browser=chrome", want: protoreflect.ValueOfString("chrome"),
		noTool: "the MCP tool list is at its token cap (gateway/mcp/toolsize_test.go)"},
	// A batch's concurrency: fetch_url reads one page.
	"concurrency": {flag: "--concurrency=3", tool: "fetch_urls", param: 3, want: protoreflect.ValueOfInt32(3)},
	// Picking: one picker a call, each in a group of its own.
	"select":         {flag: "--select=h1::text", tool: "select", param: "h1::text", want: protoreflect.ValueOfString("h1::text"), json: "picked", group: "css"},
	"fields":         {flag: "--field=t=h1", tool: "select", param: map[string]any{"t": "h1"}, want: fieldsValue(&distillv1.PickField{Name: "t", Selector: "h1"}), json: "picked", group: "css"},
	"similar":        {flag: "--similar", tool: "select", param: true, want: protoreflect.ValueOfBool(true), json: "picked", group: "css"},
	"max_matches":    {flag: "--max-matches=5", tool: "select", param: 5, want: protoreflect.ValueOfInt32(5), json: "picked", group: "css"},
	"xpath":          {flag: "--xpath=//h1", tool: "select", param: "//h1", want: protoreflect.ValueOfString("//h1"), json: "picked", group: "xpath"},
	"find_text":      {flag: "--find-text=page", tool: "select", param: "page", want: protoreflect.ValueOfString("page"), json: "picked", group: "find"},
	"exact":          {flag: "--exact", tool: "select", param: true, want: protoreflect.ValueOfBool(true), json: "picked", group: "find"},
	"case_sensitive": {flag: "--case-sensitive", tool: "select", param: true, want: protoreflect.ValueOfBool(true), json: "picked", group: "find"},
	"find_regex":     {flag: "--find-regex=^P", tool: "select", param: "^P", want: protoreflect.ValueOfString("^P"), json: "picked", group: "regex"},
	// Browser work: the JSON carries what it produced.
	"steps":               {flag: "--steps=" + waitStep, tool: "fetch_url", param: waitStep, want: protoreflect.ValueOfString(waitStep), json: "steps"},
	"scroll":              {flag: "--scroll=5", tool: "fetch_url", param: 5, want: protoreflect.ValueOfInt32(5)},
	"screenshot":          {flag: "--screenshot=full", tool: "fetch_url", param: "full", want: protoreflect.ValueOfString("full"), json: "screenshot"},
	"screenshot_format":   {flag: "--screenshot-format=jpeg", tool: "fetch_url", param: "jpeg", want: protoreflect.ValueOfString("jpeg")},
	"pdf":                 {flag: "--pdf", tool: "fetch_url", param: true, want: protoreflect.ValueOfBool(true), json: "pdf"},
	"mhtml":               {flag: "--mhtml", tool: "fetch_url", param: true, want: protoreflect.ValueOfBool(true), json: "mhtml"},
	"capture_network":     {flag: "--capture-network=api", tool: "fetch_url", param: "api", want: protoreflect.ValueOfString("api"), json: "network"},
	"capture_types":       {flag: "--capture-types=xhr,document", tool: "fetch_url", param: []string{"xhr", "document"}, want: list("capture_types", "xhr", "document")},
	"capture_credentials": {flag: "--capture-credentials", tool: "fetch_url", param: true, want: protoreflect.ValueOfBool(true)},
	"block":               {flag: "--block=images,fonts", tool: "fetch_url", param: []string{"images", "fonts"}, want: list("block", "images", "fonts")},
	// The reading options.
	"query":         {flag: "--query=who keeps the lamp", tool: "fetch_url", param: "who keeps the lamp", want: protoreflect.ValueOfString("who keeps the lamp")},
	"chunk":         {flag: "--chunk=64", tool: "fetch_url", param: 64, want: protoreflect.ValueOfInt32(64), json: "chunks"},
	"chunk_overlap": {flag: "--chunk-overlap=8", tool: "fetch_url", param: 8, want: protoreflect.ValueOfInt32(8)},
	"citations":     {flag: "--citations", tool: "fetch_url", param: true, want: protoreflect.ValueOfBool(true)},
	"diff_with": {flag: "--diff-with=", file: oldPage, tool: "diff", param: oldPage, json: "diff",
		want: protoreflect.ValueOfMessage((&distillv1.Distilled{FinalUrl: page, Status: 200, Title: "Page", Markdown: "# Page, before"}).ProtoReflect())},
	"brand": {flag: "--brand", tool: "brand", implied: true, param: true, want: protoreflect.ValueOfBool(true), json: "brand"},
	// The HTTP doors'.
	"keep_page": {internal: "the Firecrawl API's html, rawHtml and images in batches and crawls: the page travels back from the worker that read it"},
	"headers":   {internal: "the Firecrawl API's headers option; the CLI and MCP send distill's own headers"},
	// The page's own parts, read from the parse the content is read from.
	"include_tags":  {flag: "--include-tags=article", tool: "fetch_url", param: []string{"article"}, want: list("include_tags", "article")},
	"exclude_tags":  {flag: "--exclude-tags=nav", tool: "fetch_url", param: []string{"nav"}, want: list("exclude_tags", "nav")},
	"raw_html":      {flag: "--raw-html", tool: "fetch_url", param: true, want: protoreflect.ValueOfBool(true), json: "raw_html"},
	"clean_html":    {flag: "--clean-html", tool: "fetch_url", param: true, want: protoreflect.ValueOfBool(true), json: "clean_html"},
	"images":        {flag: "--images", tool: "fetch_url", param: true, want: protoreflect.ValueOfBool(true), json: "images"},
	"head_metadata": {flag: "--head-metadata", tool: "fetch_url", param: true, want: protoreflect.ValueOfBool(true), json: "head"},
}

// fieldsValue is FetchOptions.fields holding fs, as reflection reads it.
func fieldsValue(fs ...*distillv1.PickField) protoreflect.Value {
	o := &distillv1.FetchOptions{Fields: fs}
	return o.ProtoReflect().Get(o.ProtoReflect().Descriptor().Fields().ByName("fields"))
}

const waitStep = `[{"type":"wait","milliseconds":5}]`

// list is a repeated string field of FetchOptions holding values.
func list(field protoreflect.Name, values ...string) protoreflect.Value {
	m := (&distillv1.FetchOptions{}).ProtoReflect()
	fd := m.Descriptor().Fields().ByName(field)
	l := m.Mutable(fd).List()
	for _, v := range values {
		l.Append(protoreflect.ValueOfString(v))
	}
	return m.Get(fd)
}

func enum(e protoreflect.Enum) protoreflect.Value { return protoreflect.ValueOfEnum(e.Number()) }

const page = "http://127.0.0.1:1/page"

// toolArgs are the arguments each tool requires besides the options.
var toolArgs = map[string]map[string]any{
	"fetch_url":  {"url": page},
	"fetch_urls": {"urls": []string{page}},
	"select":     {"url": page},
	"diff":       {"url": page},
	"brand":      {"url": page},
}

// TestEveryFetchOptionReachesThePublicSurface walks FetchOptions by
// reflection: a field added to options.proto fails here, by name, until it
// is a flag of `distill fetch`, a parameter of its MCP tool and, if it adds
// a part to the page, a key of the public JSON — or is listed as internal.
// Both doors are driven as a user drives them: the CLI against a gateway
// on loopback that records the request, MCP over stdio.
func TestEveryFetchOptionReachesThePublicSurface(t *testing.T) {
	fields := (&distillv1.FetchOptions{}).ProtoReflect().Descriptor().Fields()
	flags := map[string][]string{}
	// params are keyed by tool and group.
	params := map[[2]string]map[string]any{}
	for name, r := range fetchOptionsReach {
		switch {
		case fields.ByName(name) == nil:
			t.Errorf("fetchOptionsReach lists %s, which FetchOptions no longer has", name)
			continue
		case r.internal != "":
			continue
		case r.flag == "" || (r.tool == "" || r.param == nil) && r.noTool == "" || !r.want.IsValid():
			t.Errorf("fetchOptionsReach[%s] names no flag, tool, param or wanted value, and no reason to keep it internal", name)
			continue
		}
		flag := r.flag
		if r.file != "" {
			path := filepath.Join(t.TempDir(), string(name))
			if err := os.WriteFile(path, []byte(r.file), 0o600); err != nil {
				t.Fatal(err)
			}
			flag += path
		}
		flags[r.group] = append(flags[r.group], flag)
		if r.noTool != "" {
			continue
		}
		key := [2]string{r.tool, r.group}
		if params[key] == nil {
			params[key] = map[string]any{}
		}
		if !r.implied {
			params[key][string(name)] = r.param
		}
	}
	cliOpts, cliJSON := map[string]*distillv1.FetchOptions{}, map[string]map[string]json.RawMessage{}
	for group, fl := range flags {
		if group != "" {
			// The default group sets --format=json for all.
			fl = append(fl, fetchOptionsReach["format"].flag)
		}
		cliOpts[group], cliJSON[group] = fetchWithCLI(t, fl)
	}
	mcpOpts, mcpJSON, mcpText := map[[2]string]*distillv1.FetchOptions{}, map[[2]string]map[string]json.RawMessage{}, map[[2]string]string{}
	mc := connectMCP(t)
	for key, p := range params {
		mcpOpts[key], mcpJSON[key], mcpText[key] = callMCP(t, mc, key[0], p)
	}

	for i := range fields.Len() {
		fd := fields.Get(i)
		r, ok := fetchOptionsReach[fd.Name()]
		if !ok {
			t.Errorf("FetchOptions.%s (options.proto field %d) reaches no door: make it a flag of `distill fetch`, "+
				"a parameter of the MCP tool it belongs to, and a key of the public JSON if it adds a part to the page; "+
				"then list it in fetchOptionsReach, or list it there as internal with the reason", fd.Name(), fd.Number())
			continue
		}
		if r.internal != "" || r.flag == "" || !r.want.IsValid() {
			continue
		}
		if got := cliOpts[r.group].ProtoReflect(); !got.Has(fd) || !got.Get(fd).Equal(r.want) {
			t.Errorf("distill fetch %s: FetchOptions.%s = %v (set %t), want %v", r.flag, fd.Name(), got.Get(fd), got.Has(fd), r.want)
		}
		if r.tool == "" || r.param == nil {
			continue
		}
		key := [2]string{r.tool, r.group}
		if got := mcpOpts[key].ProtoReflect(); !got.Has(fd) || !got.Get(fd).Equal(r.want) {
			t.Errorf("MCP %s {%q: %v}: FetchOptions.%s = %v (set %t), want %v", r.tool, fd.Name(), r.param, fd.Name(), got.Get(fd), got.Has(fd), r.want)
		}
		if r.json == "" {
			continue
		}
		if _, ok := cliJSON[r.group][r.json]; !ok {
			t.Errorf("distill fetch %s --format=json: no %q in the JSON %v", r.flag, r.json, slices.Sorted(maps.Keys(cliJSON[r.group])))
		}
		if r.tool == "select" {
			// The select tool answers with what was picked, not the page.
			want, err := output.MarshalPicked(wholePage().GetPicked())
			if err != nil || mcpText[key] != string(want) {
				t.Errorf("MCP select {%q: %v}: answered %q, want the picked %s", fd.Name(), r.param, mcpText[key], want)
			}
			continue
		}
		if _, ok := mcpJSON[[2]string{"fetch_url", ""}][r.json]; !ok {
			t.Errorf("MCP fetch_url {%q: %v, format: json}: no %q in the JSON %v", fd.Name(), r.param, r.json, slices.Sorted(maps.Keys(mcpJSON[[2]string{"fetch_url", ""}])))
		}
	}
}

// wholePage is a page carrying every part an option can ask for, as the
// pipeline answers when every option is on.
func wholePage() *distillv1.Distilled {
	return &distillv1.Distilled{
		FinalUrl: page, Status: 200, Title: "Page", Markdown: "# Page\n",
		Stats:       &distillv1.Stats{RawBytes: 100, RawTokens: 40, OutputTokens: 4, SavedTokens: 36, SavedRatio: 0.9},
		Links:       &distillv1.LinkList{Items: []*distillv1.Link{{Href: page, Text: "Page"}}},
		Tables:      &distillv1.TableList{Items: []*distillv1.Table{{Headers: []string{"a"}, Rows: []*distillv1.TableRow{{Cells: []string{"1"}}}}}},
		Actions:     &distillv1.Actions{Links: []*distillv1.LinkAction{{ActionId: "link_1", Href: page, Text: "Page"}}},
		Diagnostics: &distillv1.Diagnostics{Profile: "full", RawBytes: 100, OutputChars: 7, OutputTokens: 4},
		Picked:      &distillv1.Picked{Kind: distillv1.PickedKind_PICKED_KIND_VALUES, Values: []string{"Page"}},
		Screenshot:  []byte("png"), Pdf: []byte("%PDF-"), Mhtml: []byte("MIME-Version: 1.0"),
		Network: &distillv1.NetworkCapture{Responses: []*distillv1.CapturedResponse{{Url: page, Method: "GET", Status: 200}}},
		Steps:   &distillv1.StepResults{Items: []*distillv1.StepResult{{Index: 0, Type: "executeJavascript", Value: proto.String("1")}}},
		Chunks:  &distillv1.ChunkList{Items: []*distillv1.Chunk{{Url: page, HeadingPath: []string{"Page"}, Tokens: 3, Text: "# Page"}}},
		Diff:    &distillv1.PageDiff{Changed: true, Fields: []*distillv1.FieldChange{{Field: "title", Old: "Old", New: "Page"}}},
		Brand:   &distillv1.Brand{Name: "Page"},
		RawHtml: proto.String("<html><body><h1>Page</h1></body></html>"), CleanHtml: proto.String("<h1>Page</h1>"),
		Images: &distillv1.ImageList{Urls: []string{page + ".png"}},
		Head:   &distillv1.PageHead{ContentType: "text/html", Title: "Page"},
	}
}

// recordingGateway is a distill gateway that answers every fetch with
// wholePage and keeps the options it was sent.
type recordingGateway struct {
	distillv1.UnimplementedDistillServiceServer
	mu   sync.Mutex
	opts *distillv1.FetchOptions
}

func (g *recordingGateway) Fetch(_ context.Context, req *distillv1.FetchRequest) (*distillv1.FetchResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.opts = req.GetOptions()
	return &distillv1.FetchResponse{Distilled: wholePage()}, nil
}

// fetchWithCLI runs `distill fetch --server` with flags against a
// recording gateway, and returns the options the gateway received and the
// JSON printed.
func fetchWithCLI(t *testing.T, flags []string) (*distillv1.FetchOptions, map[string]json.RawMessage) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gw := &recordingGateway{}
	srv := grpc.NewServer()
	distillv1.RegisterDistillServiceServer(srv, gw)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	args := append([]string{"fetch", "--server", lis.Addr().String()}, flags...)
	var stdout, stderr bytes.Buffer
	if code := cli.Run(context.Background(), append(args, page), envflag.New(func(string) (string, bool) { return "", false }), &stdout, &stderr); code != cli.ExitOK {
		t.Fatalf("distill %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("distill %s printed %q, not a JSON object: %v", strings.Join(args, " "), stdout.String(), err)
	}
	gw.mu.Lock()
	defer gw.mu.Unlock()
	return proto.CloneOf(gw.opts), out
}

// recordingService answers fetch_url and fetch_urls with wholePage and
// keeps the options of the last call; the tools tested here call no other
// method.
type recordingService struct {
	mcp.Service
	mu   sync.Mutex
	opts *distillv1.FetchOptions
}

func (s *recordingService) Fetch(_ context.Context, req *distillv1.FetchRequest) (*distillv1.FetchResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts = req.GetOptions()
	return &distillv1.FetchResponse{Distilled: wholePage()}, nil
}

func (s *recordingService) Batch(_ context.Context, req *distillv1.FetchBatchRequest, deliver func(*distillv1.FetchBatchResponse)) error {
	s.mu.Lock()
	s.opts = req.GetOptions()
	s.mu.Unlock()
	for i, u := range req.GetUrls() {
		deliver(&distillv1.FetchBatchResponse{Index: int32(i), Url: u, Outcome: &distillv1.FetchBatchResponse_Result{Result: wholePage()}})
	}
	return nil
}

type mcpClient struct {
	cs  *mcpsdk.ClientSession
	svc *recordingService
}

// connectMCP serves distill's MCP tools over a recordingService on stdio
// pipes, and returns a client of them.
func connectMCP(t *testing.T) mcpClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	svc := &recordingService{}
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- mcp.New(slog.New(slog.DiscardHandler), svc, "test").ServeStdio(ctx, toServer, fromServer)
		fromServer.Close()
	}()
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "test"}, nil).
		Connect(ctx, &mcpsdk.IOTransport{Reader: toClient, Writer: fromClient}, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		if err := <-served; err != nil {
			t.Errorf("mcp stdio: %v", err)
		}
	})
	return mcpClient{cs: cs, svc: svc}
}

// callMCP calls tool with the options in params and returns the options
// the service received, for a page's answer its JSON, and the answer's
// text.
func callMCP(t *testing.T, c mcpClient, tool string, params map[string]any) (*distillv1.FetchOptions, map[string]json.RawMessage, string) {
	t.Helper()
	required, ok := toolArgs[tool]
	if !ok {
		t.Fatalf("no arguments known for MCP tool %s: add them to toolArgs", tool)
	}
	args := map[string]any{}
	for k, v := range required {
		args[k] = v
	}
	for k, v := range params {
		args[k] = v
	}
	res, err := c.cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("MCP %s: %v", tool, err)
	}
	var text string
	for _, block := range res.Content {
		if tc, ok := block.(*mcpsdk.TextContent); ok {
			text += tc.Text
		}
	}
	if res.IsError {
		t.Fatalf("MCP %s(%v): tool error: %s", tool, args, text)
	}
	var page map[string]json.RawMessage
	_ = json.Unmarshal([]byte(text), &page) // fetch_urls answers an array
	c.svc.mu.Lock()
	defer c.svc.mu.Unlock()
	return proto.CloneOf(c.svc.opts), page, text
}
