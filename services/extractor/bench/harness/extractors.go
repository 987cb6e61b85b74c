package harness

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	readability "codeberg.org/readeck/go-readability/v2"
	"github.com/markusmobius/go-trafilatura"
	"golang.org/x/net/html"
	"google.golang.org/protobuf/proto"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/extract"
)

// Extractor turns one page into the text a user of it would get.
type Extractor struct {
	Name    string
	Extract func(ctx context.Context, p Page) (string, error)
	// Typed, when set, is Extract that also says which page type the
	// extractor took the page for, as the extractor itself reports it.
	// It is used untimed, when a confusion matrix is asked for.
	Typed func(ctx context.Context, p Page) (text, pageType string, err error)
}

// pageURL falls back to a placeholder so every extractor gets an absolute
// URL even when a corpus lacks one.
func pageURL(p Page) string {
	if p.URL == "" {
		return "https://example.com/" + url.PathEscape(p.ID)
	}
	return p.URL
}

// Distill is the article profile with text output: what
// `distill extract --format text` prints.
func Distill(logger *slog.Logger) Extractor {
	return DistillWith(extract.New(logger))
}

// DistillWith is Distill running extractor e.
func DistillWith(e *extract.Extractor) Extractor {
	opts := &distillv1.FetchOptions{
		Format:  distillv1.Format_FORMAT_TEXT,
		Profile: distillv1.Profile_PROFILE_ARTICLE,
	}
	// Diagnostics cost a little (links and tables are counted), so only
	// the untyped, timed extraction goes without them.
	diagOpts := proto.CloneOf(opts)
	diagOpts.Diagnostics = true
	run := func(ctx context.Context, p Page, opts *distillv1.FetchOptions) (*distillv1.Distilled, error) {
		resp, err := e.Extract(ctx, &internalv1.ExtractRequest{
			Html:        p.HTML,
			Url:         pageURL(p),
			Status:      200,
			ContentType: "text/html; charset=utf-8",
			Options:     opts,
		})
		if err != nil {
			return nil, err
		}
		return resp.GetDistilled(), nil
	}
	text := func(d *distillv1.Distilled) string { return strings.TrimRight(d.GetText(), "\n") + "\n" }
	return Extractor{
		Name: "distill",
		Extract: func(ctx context.Context, p Page) (string, error) {
			d, err := run(ctx, p, opts)
			if err != nil {
				return "", err
			}
			return text(d), nil
		},
		Typed: func(ctx context.Context, p Page) (string, string, error) {
			d, err := run(ctx, p, diagOpts)
			if err != nil {
				return "", "", err
			}
			return text(d), d.GetDiagnostics().GetPageType(), nil
		},
	}
}

// Trafilatura is go-trafilatura as its own CLI runs by default (fallback
// extractors on) and as the benchmark scores article bodies (comments
// off).
func Trafilatura() Extractor {
	return Extractor{Name: "go-trafilatura", Extract: func(_ context.Context, p Page) (string, error) {
		u, _ := url.Parse(pageURL(p))
		res, err := trafilatura.Extract(bytes.NewReader(p.HTML), trafilatura.Options{
			OriginalURL:     u,
			EnableFallback:  true,
			ExcludeComments: true,
		})
		if err != nil {
			return "", err
		}
		return res.ContentText, nil
	}}
}

// Readability is go-readability's text content.
func Readability() Extractor {
	return Extractor{Name: "go-readability", Extract: func(_ context.Context, p Page) (string, error) {
		u, _ := url.Parse(pageURL(p))
		art, err := readability.FromReader(bytes.NewReader(p.HTML), u)
		if err != nil {
			return "", err
		}
		if art.Node == nil {
			return "", nil
		}
		var b strings.Builder
		if err := art.RenderText(&b); err != nil {
			return "", fmt.Errorf("render text: %w", err)
		}
		return b.String(), nil
	}}
}

// ParseWalk is the floor an extractor's speed is measured against: the
// page parsed by golang.org/x/net/html, as distill parses it, and every
// node visited once, gathering the text outside scripts and styles. It is
// timed, not scored.
func ParseWalk() Extractor {
	return Extractor{Name: "parse+walk", Extract: func(_ context.Context, p Page) (string, error) {
		doc, err := html.Parse(bytes.NewReader(p.HTML))
		if err != nil {
			return "", err
		}
		var b strings.Builder
		var walk func(n *html.Node)
		walk = func(n *html.Node) {
			switch {
			case n.Type == html.TextNode:
				b.WriteString(n.Data)
				b.WriteByte(' ')
			case n.Type == html.ElementNode && (n.Data == "script" || n.Data == "style" || n.Data == "template"):
				return
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
		}
		walk(doc)
		return b.String(), nil
	}}
}
