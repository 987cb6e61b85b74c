package extract

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/cleanhtml"
	"distill.dev/services/extractor/internal/weburl"
	"distill.dev/services/extractor/metadata"
)

// The page's own parts (raw_html, clean_html, images, head_metadata) are
// read from the tree the content is read from, right after it is parsed
// and exclude_tags are taken out of it, before any reader edits it: one
// parse of the page serves them all.

// parseHookKey is the context key of WithParseHook's callback.
type parseHookKey struct{}

// WithParseHook returns ctx with f, which an extraction under it calls
// each time it parses an HTML page. It lets a door's tests count what one
// request costs: one scrape, whatever its options, parses its page once.
func WithParseHook(ctx context.Context, f func()) context.Context {
	return context.WithValue(ctx, parseHookKey{}, f)
}

// parsed tells ctx's parse hook, if any, that a page was parsed.
func parsed(ctx context.Context) {
	if f, ok := ctx.Value(parseHookKey{}).(func()); ok {
		f()
	}
}

// tagSelectors compiles a list of CSS selectors as one, any of them; none
// gives nil.
func tagSelectors(list []string) (cascadia.Selector, error) {
	return compileSelector(strings.Join(list, ", "))
}

// contentSelector is the selector the content is chosen by: selector and
// include_tags, any of them.
func contentSelector(opts *distillv1.FetchOptions) (cascadia.Selector, error) {
	var all []string
	if s := opts.GetSelector(); strings.TrimSpace(s) != "" {
		all = append(all, s)
	}
	return tagSelectors(append(all, opts.GetIncludeTags()...))
}

// readsSource says whether the options ask for a part rendered from the
// page's markup, which must then be parsed whole.
func readsSource(opts *distillv1.FetchOptions) bool {
	return opts.GetRawHtml() || opts.GetCleanHtml() || opts.GetImages()
}

func wantsExclude(hp *htmlPage) bool   { return hp.exclude != nil }
func wantsPageParts(hp *htmlPage) bool { return readsSource(hp.opts) || hp.opts.GetHeadMetadata() }

// excludeTags takes the elements exclude_tags select out of the page,
// before anything reads it.
func excludeTags(_ context.Context, _ *Extractor, hp *htmlPage) error {
	for _, n := range cascadia.QueryAll(hp.doc, hp.exclude) {
		if n.Parent != nil {
			n.Parent.RemoveChild(n)
		}
	}
	return nil
}

// readPageParts reads the parts of the page the options ask for.
func readPageParts(_ context.Context, _ *Extractor, hp *htmlPage) error {
	opts := hp.opts
	if opts.GetRawHtml() {
		raw, err := hp.rawHTML()
		if err != nil {
			return err
		}
		hp.p.rawHTML = &raw
	}
	if opts.GetImages() {
		hp.p.images = imagesOf(hp.doc, weburl.Base(hp.doc, hp.u))
	}
	if opts.GetHeadMetadata() {
		hp.p.head = metadata.ReadHead(hp.doc, hp.u)
	}
	if opts.GetCleanHtml() {
		// The furniture is content when the whole page or a selector's
		// elements are asked for.
		var only cascadia.Matcher
		if hp.include != nil {
			only = hp.include
		}
		clean := cleanhtml.Page(hp.doc, hp.profile != profileFull && hp.profile != profileSelector, only)
		hp.p.cleanHTML = &clean
	}
	return nil
}

// rawHTML is the page decoded to UTF-8 or, when exclude_tags took
// elements out of it, what is left of it.
func (hp *htmlPage) rawHTML() (string, error) {
	if hp.exclude == nil {
		return string(hp.body), nil
	}
	var b strings.Builder
	if err := html.Render(&b, hp.doc); err != nil {
		return "", failure.Wrap(failure.Internal, err, "render the page")
	}
	return b.String(), nil
}

// imagesOf lists the page's images, absolute http(s) URLs once each:
// <img> and <source> src and the first candidate of each srcset.
func imagesOf(doc *html.Node, base *url.URL) []string {
	out := []string{}
	seen := map[string]bool{}
	add := func(ref string) {
		u, ok := weburl.Resolve(base, ref, "http", "https")
		if !ok || seen[u] {
			return
		}
		seen[u] = true
		out = append(out, u)
	}
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode || n.DataAtom != atom.Img && n.DataAtom != atom.Source {
			continue
		}
		for _, a := range n.Attr {
			switch a.Key {
			case "src":
				add(a.Val)
			case "srcset":
				first, _, _ := strings.Cut(strings.TrimSpace(a.Val), ",")
				ref, _, _ := strings.Cut(strings.TrimSpace(first), " ")
				add(ref)
			}
		}
	}
	return out
}

// CheckTags reports whether include_tags or exclude_tags can be used as
// the extractor reads them: each selector alone, then all of them as the
// one selector they make, within CheckSelector's bounds. Its error names
// the list as name, the door's own word for it (--exclude-tags,
// exclude_tags). Doors call it before fetching.
func CheckTags(name string, tags []string) error {
	for _, t := range tags {
		if strings.TrimSpace(t) == "" {
			return failure.New(failure.InvalidArgument, "%s: an empty selector; give a CSS selector such as nav or .ad", name)
		}
		if err := CheckSelector(t); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if _, err := tagSelectors(tags); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
