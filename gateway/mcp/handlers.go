package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/proto"

	"distill.dev/gateway/output"
	"distill.dev/proto/fetchopts"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/extract"
)

// tool is one MCP tool: its public name and parameters, and run, which
// answers a call with the result's text blocks.
type tool struct {
	name, desc string
	params     []param
	// readOnly tools only read pages; a destructive one may change
	// something on a site (a form submission). Clients use these hints to
	// decide what to confirm with their user.
	readOnly, destructive bool
	run                   func(ctx context.Context, a args) ([]string, error)
	// runContent, when set, answers instead of run with content blocks of
	// any kind (an image).
	runContent func(ctx context.Context, a args) ([]mcpsdk.Content, error)
}

func (t tool) spec() *mcpsdk.Tool {
	openWorld := true
	return &mcpsdk.Tool{
		Name:        t.name,
		Description: t.desc,
		InputSchema: inputSchema(t.params),
		Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: t.readOnly, DestructiveHint: &t.destructive, OpenWorldHint: &openWorld},
	}
}

// handler answers every failure, bad arguments included, as a tool error
// the model reads; only the SDK itself answers protocol errors (an
// unknown tool).
func (t tool) handler(logger *slog.Logger) mcpsdk.ToolHandler {
	return func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		var texts []string
		var blocks []mcpsdk.Content
		a, err := decodeArgs(req.Params.Arguments, t.params)
		switch {
		case err != nil:
			err = argError{err}
		case t.runContent != nil:
			blocks, err = t.runContent(ctx, a)
		default:
			texts, err = t.run(ctx, a)
		}
		if err != nil {
			msg := errorText(t.name, err)
			logger.Info("mcp tool failed", "tool", t.name, "err", msg)
			return &mcpsdk.CallToolResult{IsError: true, Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: msg}}}, nil
		}
		content := blocks
		for _, text := range texts {
			content = append(content, &mcpsdk.TextContent{Text: text})
		}
		return &mcpsdk.CallToolResult{Content: content}, nil
	}
}

// handlers run the tools against the Service.
type handlers struct{ svc Service }

// options returns the call's FetchOptions once they pass the checks every
// door applies.
func options(a args) (*distillv1.FetchOptions, error) {
	opts := fetchOptions(a)
	if err := fetchopts.Validate(opts); err != nil {
		return nil, optionError(err)
	}
	// Pictures and archives travel as base64 in the JSON alone.
	if (opts.GetScreenshot() != "" || opts.GetPdf() || opts.GetMhtml()) && fetchopts.Format(opts) != distillv1.Format_FORMAT_JSON {
		return nil, argError{errors.New("screenshot, pdf and mhtml come back in format json; for a picture alone use the screenshot tool")}
	}
	// A selector that cannot run is refused before anything is fetched.
	if err := extract.CheckSelector(opts.GetSelector()); err != nil {
		return nil, argError{err}
	}
	if err := extract.CheckTags("include_tags", opts.GetIncludeTags()); err != nil {
		return nil, argError{err}
	}
	if err := extract.CheckTags("exclude_tags", opts.GetExcludeTags()); err != nil {
		return nil, argError{err}
	}
	return opts, nil
}

func (h handlers) fetchURL(ctx context.Context, a args) ([]string, error) {
	opts, err := options(a)
	if err != nil {
		return nil, err
	}
	// Diagnostics are asked for whatever the caller said: only they tell
	// that the body was cut at max_bytes, which the model must know.
	sent := proto.CloneOf(opts)
	sent.Diagnostics = true
	res, err := h.svc.Fetch(ctx, &distillv1.FetchRequest{Url: a.str("url"), Options: sent})
	if err != nil {
		return nil, err
	}
	d := res.GetDistilled()
	truncated := d.GetDiagnostics().GetTruncatedBody()
	if !opts.GetDiagnostics() {
		d.Diagnostics = nil
	}
	format := fetchopts.Format(opts)
	if opts.GetChunk() > 0 && format != distillv1.Format_FORMAT_JSON {
		texts, err := jsonText(output.MarshalChunks(d))
		if truncated {
			texts = append(texts, fmt.Sprintf("note: the page is longer than max_bytes; these chunks are of its first %d bytes (raise max_bytes for the rest)", fetchopts.MaxBytes(opts)))
		}
		return texts, err
	}
	if format == distillv1.Format_FORMAT_JSON && (!truncated || opts.GetDiagnostics()) {
		return jsonText(output.MarshalDistilled(d))
	}
	note := fmt.Sprintf("note: the page is longer than max_bytes; this is its first %d bytes (raise max_bytes for the rest)", fetchopts.MaxBytes(opts))
	if format == distillv1.Format_FORMAT_JSON {
		texts, err := jsonText(output.MarshalDistilled(d))
		return append(texts, note), err
	}
	content := output.Content(d, format)
	// An error page reads like any other page: the status line tells the
	// model it did not get what the URL is meant to hold. JSON carries the
	// status in its own field.
	if d.GetStatus() >= 400 {
		content = output.HTTPStatus(d.GetStatus()) + "\n\n" + content
	}
	texts, err := withJSONBlocks([]string{content}, d)
	if err != nil {
		return nil, err
	}
	var report []string
	if truncated {
		report = append(report, note)
	}
	if opts.GetStats() {
		report = append(report, output.StatsLine(d))
	}
	if opts.GetDiagnostics() {
		report = append(report, output.DiagnosticsLine(d))
	}
	if len(report) > 0 {
		texts = append(texts, strings.Join(report, "\n"))
	}
	return texts, nil
}

// withJSONBlocks follows a page printed as Markdown or text with what has
// no place in it, each as JSON of its own: what steps and a capture
// returned, then the page's own parts.
func withJSONBlocks(texts []string, d *distillv1.Distilled) ([]string, error) {
	for _, block := range []func(*distillv1.Distilled) ([]byte, error){output.MarshalBrowserWork, output.MarshalPageParts} {
		b, err := block(d)
		if err != nil {
			return nil, err
		}
		if b != nil {
			texts = append(texts, string(b))
		}
	}
	return texts, nil
}

func (h handlers) observeURL(ctx context.Context, a args) ([]string, error) {
	opts, err := options(a)
	if err != nil {
		return nil, err
	}
	res, err := h.svc.Observe(ctx, &distillv1.ObserveRequest{Url: a.str("url"), Options: opts})
	if err != nil {
		return nil, err
	}
	return jsonText(output.MarshalDistilled(res.GetDistilled()))
}

func (h handlers) fetchURLs(ctx context.Context, a args) ([]string, error) {
	opts, err := options(a)
	if err != nil {
		return nil, err
	}
	urls := a.strs("urls")
	items := make([]output.BatchItem, len(urls))
	err = h.svc.Batch(ctx, &distillv1.FetchBatchRequest{Urls: urls, Options: opts}, func(r *distillv1.FetchBatchResponse) {
		items[r.GetIndex()] = output.ItemOf(r)
	})
	if err != nil {
		return nil, err
	}
	// Compact, not indented as at a terminal: a model pays for whitespace in
	// tokens.
	return jsonText(output.MarshalBatchJSONIn(items, fetchopts.Format(opts)))
}

func (h handlers) diff(ctx context.Context, a args) ([]string, error) {
	old, err := output.ReadDistilled([]byte(a.str("diff_with")))
	if err != nil {
		// Not a page's JSON: the earlier Markdown itself.
		old = &distillv1.Distilled{Markdown: a.str("diff_with")}
	}
	opts, err := options(a)
	if err != nil {
		return nil, err
	}
	opts.DiffWith = old
	res, err := h.svc.Fetch(ctx, &distillv1.FetchRequest{Url: a.str("url"), Options: opts})
	if err != nil {
		return nil, err
	}
	return []string{output.DiffText(res.GetDistilled().GetDiff())}, nil
}

func (h handlers) brand(ctx context.Context, a args) ([]string, error) {
	opts, err := options(a)
	if err != nil {
		return nil, err
	}
	opts.Brand = true
	res, err := h.svc.Fetch(ctx, &distillv1.FetchRequest{Url: a.str("url"), Options: opts})
	if err != nil {
		return nil, err
	}
	return jsonText(output.MarshalBrand(res.GetDistilled().GetBrand()))
}

func (h handlers) sessionStart(ctx context.Context, a args) ([]string, error) {
	req := &distillv1.SessionStartRequest{
		Url:              a.str("url"),
		Profile:          distillv1.Profile(a.enum("profile")),
		MaxActions:       a.int32p("max_actions"),
		TimeoutSecs:      a.int32p("timeout_secs"),
		AllowLocal:       a.flag("allow_local"),
		RespectRobots:    a.flag("respect_robots"),
		MaxActionRetries: a.int32p("max_action_retries"),
		Js:               distillv1.JsMode(a.enum("js")),
		JsWait:           a.int32p("js_wait"),
	}
	// The limits a session shares with a fetch are checked the same way.
	shared := &distillv1.FetchOptions{TimeoutSecs: req.TimeoutSecs, MaxActions: req.MaxActions, JsWait: req.JsWait}
	if err := fetchopts.Validate(shared); err != nil {
		return nil, optionError(err)
	}
	res, err := h.svc.SessionStart(ctx, req)
	if err != nil {
		return nil, err
	}
	return jsonText(output.MarshalSessionView(res.GetView()))
}

func (h handlers) sessionObserve(ctx context.Context, a args) ([]string, error) {
	res, err := h.svc.SessionObserve(ctx, &distillv1.SessionObserveRequest{SessionId: a.str("session_id"), Url: a.str("url")})
	if err != nil {
		return nil, err
	}
	return jsonText(output.MarshalSessionView(res.GetView()))
}

func (h handlers) sessionFollow(ctx context.Context, a args) ([]string, error) {
	res, err := h.svc.SessionFollow(ctx, &distillv1.SessionFollowRequest{SessionId: a.str("session_id"), ActionId: a.str("action_id")})
	if err != nil {
		return nil, err
	}
	return jsonText(output.MarshalSessionView(res.GetView()))
}

func (h handlers) sessionSubmitForm(ctx context.Context, a args) ([]string, error) {
	res, err := h.svc.SessionSubmitForm(ctx, &distillv1.SessionSubmitFormRequest{
		SessionId: a.str("session_id"),
		FormId:    a.str("form_id"),
		Values:    a.formValues("values"),
		Confirm:   a.flag("confirm"),
	})
	if err != nil {
		return nil, err
	}
	return jsonText(output.MarshalSubmitForm(res))
}

func (h handlers) sessionAct(ctx context.Context, a args) ([]string, error) {
	res, err := h.svc.SessionAct(ctx, &distillv1.SessionActRequest{
		SessionId: a.str("session_id"), Steps: a.str("steps"), Confirm: a.flag("confirm"),
	})
	if err != nil {
		return nil, err
	}
	return jsonText(output.MarshalAct(res))
}

func (h handlers) sessionClose(ctx context.Context, a args) ([]string, error) {
	res, err := h.svc.SessionClose(ctx, &distillv1.SessionCloseRequest{SessionId: a.str("session_id")})
	if err != nil {
		return nil, err
	}
	return jsonText(output.MarshalSessionClose(res))
}

func jsonText(b []byte, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	return []string{string(b)}, nil
}

func (h handlers) mapSite(ctx context.Context, a args) ([]string, error) {
	limit := int32(defaultMapLimit)
	if p := a.int32p("map_limit"); p != nil {
		limit = *p
	}
	if limit < 1 || limit > maxMapLimit {
		return nil, argError{fmt.Errorf("map_limit must be 1 to %d, got %d", maxMapLimit, limit)}
	}
	req := &distillv1.MapRequest{
		Url:               a.str("url"),
		PathPrefix:        a.str("path_prefix"),
		IncludePaths:      a.strs("include_paths"),
		ExcludePaths:      a.strs("exclude_paths"),
		IncludeSubdomains: a.flag("include_subdomains"),
		IgnoreRobots:      a.flag("ignore_robots"),
		MapLimit:          &limit,
		Query:             a.str("query"),
		AllowLocal:        a.flag("allow_local"),
		TimeoutSecs:       a.int32p("timeout_secs"),
	}
	if err := fetchopts.Validate(&distillv1.FetchOptions{TimeoutSecs: req.TimeoutSecs}); err != nil {
		return nil, optionError(err)
	}
	var urls []string
	var last *distillv1.MapResponse
	err := h.svc.MapSite(ctx, req, func(r *distillv1.MapResponse) error {
		urls = append(urls, r.GetUrls()...)
		last = r
		return nil
	})
	if err != nil {
		return nil, err
	}
	return mapTexts(req, urls, last), nil
}

// mapTexts is the map tool's answer: the URLs one a line, cut to
// maxMapChars, then what the model needs to judge the list: the counts,
// what was left out and how to reach it, and the map's notes.
func mapTexts(req *distillv1.MapRequest, urls []string, last *distillv1.MapResponse) []string {
	var list strings.Builder
	shown := 0
	for _, u := range urls {
		if list.Len()+len(u)+1 > maxMapChars {
			break
		}
		list.WriteString(u)
		list.WriteByte('\n')
		shown++
	}
	found := max(int(last.GetFound()), len(urls))
	var report []string
	if found == 0 {
		report = append(report, fmt.Sprintf("No URLs found for %s (pages read: %d).", req.GetUrl(), last.GetPagesRead()))
	} else {
		report = append(report, fmt.Sprintf("URLs: %d listed of %d found (from sitemaps: %d, from the crawl: %d; pages read: %d).",
			shown, found, last.GetFromSitemaps(), last.GetFromCrawl(), last.GetPagesRead()))
	}
	narrow := "narrow the map with path_prefix, include_paths or exclude_paths, or rank it with query, to reach the URLs you need"
	switch {
	case shown < len(urls):
		report = append(report, fmt.Sprintf("cut: the list stops at %d characters; URLs left out: %d. To reach them, %s.", maxMapChars, found-shown, narrow))
	case found > shown:
		report = append(report, fmt.Sprintf("cut: map_limit=%d; URLs left out: %d. To reach them, raise map_limit (at most %d) or %s.", req.GetMapLimit(), found-shown, maxMapLimit, narrow))
	}
	if last.GetStoppedAtLimit() {
		report = append(report, fmt.Sprintf("The map stopped looking at map_limit=%d URLs, so the site may have more: raise map_limit (at most %d) or %s (query looks at every URL before cutting).", req.GetMapLimit(), maxMapLimit, narrow))
	}
	for _, n := range last.GetNotes() {
		report = append(report, "note: "+oneLine(n))
	}
	texts := []string{}
	if shown > 0 {
		texts = append(texts, list.String())
	}
	return append(texts, strings.Join(report, "\n"))
}
