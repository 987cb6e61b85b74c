package mcp

import (
	"context"
	"fmt"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"distill.dev/proto/fetchopts"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// screenshot answers with the rendered page as an image block, or, for
// pdf and mhtml, as an embedded resource, and a line saying what it is.
func (h handlers) screenshot(ctx context.Context, a args) ([]mcpsdk.Content, error) {
	format := a.str("format")
	if format == "" {
		format = fetchopts.FormatPNG
	}
	opts := &distillv1.FetchOptions{
		Steps: a.str("steps"), Scroll: a.int32p("scroll"), Block: a.strs("block"),
		JsWait: a.int32p("js_wait"), JsWaitFor: a.str("js_wait_for"),
		TimeoutSecs: a.int32p("timeout_secs"), AllowLocal: a.flag("allow_local"),
		// Only the picture is wanted: the page's text is not returned.
		Profile: distillv1.Profile_PROFILE_METADATA,
	}
	switch format {
	case fetchopts.FormatPNG, fetchopts.FormatJPEG:
		opts.Screenshot, opts.ScreenshotFormat = fetchopts.ScreenshotViewport, format
		if a.flag("full_page") {
			opts.Screenshot = fetchopts.ScreenshotFull
		}
	case "pdf":
		opts.Pdf = true
	case "mhtml":
		opts.Mhtml = true
	default:
		return nil, argError{fmt.Errorf("format must be png, jpeg, pdf or mhtml, got %q", format)}
	}
	if err := fetchopts.Validate(opts); err != nil {
		return nil, optionError(err)
	}
	res, err := h.svc.Fetch(ctx, &distillv1.FetchRequest{Url: a.str("url"), Options: opts})
	if err != nil {
		return nil, err
	}
	d := res.GetDistilled()
	about := &mcpsdk.TextContent{Text: fmt.Sprintf("%s of %s (HTTP %d, title %q)", format, d.GetFinalUrl(), d.GetStatus(), d.GetTitle())}
	switch format {
	case "pdf":
		return []mcpsdk.Content{about, &mcpsdk.EmbeddedResource{Resource: &mcpsdk.ResourceContents{
			URI: d.GetFinalUrl(), MIMEType: "application/pdf", Blob: d.GetPdf()}}}, nil
	case "mhtml":
		return []mcpsdk.Content{about, &mcpsdk.EmbeddedResource{Resource: &mcpsdk.ResourceContents{
			URI: d.GetFinalUrl(), MIMEType: "multipart/related", Blob: d.GetMhtml()}}}, nil
	}
	return []mcpsdk.Content{&mcpsdk.ImageContent{Data: d.GetScreenshot(), MIMEType: "image/" + format}, about}, nil
}
