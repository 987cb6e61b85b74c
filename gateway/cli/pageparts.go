package cli

import (
	"fmt"

	"github.com/spf13/pflag"

	"distill.dev/proto/fetchopts"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/extract"
)

// pagePartFlags ask for the page's own parts, read from the parse its
// content is read from: the elements it is made of or left without, its
// HTML as served and cleaned, its images and what its head says.
type pagePartFlags struct {
	includeTags, excludeTags []string
	rawHTML, cleanHTML       bool
	images, headMetadata     bool
}

// pagePartFlagNames are the page-part flags, listed in their own help
// section.
var pagePartFlagNames = []string{"include-tags", "exclude-tags", "raw-html", "clean-html", "images", "head-metadata"}

func (f *pagePartFlags) register(fs *pflag.FlagSet) {
	// StringArray, not StringSlice: a CSS selector holds commas and quotes
	// of its own (:is(h1, h2), a[rel="nofollow"]).
	fs.StringArrayVar(&f.includeTags, "include-tags", nil, "make the content of the elements this CSS `SELECTOR` matches, as --selector does (which it joins); --clean-html keeps only them; repeatable")
	fs.StringArrayVar(&f.excludeTags, "exclude-tags", nil, "take the elements this CSS `SELECTOR` matches out of the page before it is read: the content, links, tables and every page part leave them out; repeatable")
	fs.BoolVar(&f.rawHTML, "raw-html", false, "the page as HTML, decoded to UTF-8 (less --exclude-tags), as the JSON's \"raw_html\" (--format json or jsonl)")
	fs.BoolVar(&f.cleanHTML, "clean-html", false, "the page as HTML without scripts, styles and, unless --profile full or a selector, its header, navigation and footer, as the JSON's \"clean_html\" (--format json or jsonl)")
	fs.BoolVar(&f.images, "images", false, "the page's image URLs, absolute and once each (<img>, <source>, the first of each srcset), as the JSON's \"images\" (--format json or jsonl)")
	fs.BoolVar(&f.headMetadata, "head-metadata", false, "what the page's head says (title, description, language, Open Graph, favicon) and its Content-Type, as the JSON's \"head\" (--format json or jsonl)")
}

func (f *pagePartFlags) apply(o *distillv1.FetchOptions) {
	o.IncludeTags, o.ExcludeTags = f.includeTags, f.excludeTags
	o.RawHtml, o.CleanHtml = f.rawHTML, f.cleanHTML
	o.Images, o.HeadMetadata = f.images, f.headMetadata
}

// checkPageParts refuses page parts that cannot be had, before anything
// is fetched: a tag selector that does not parse or is over the bounds,
// and a part asked for in a format with no room for it (format is the
// --format value).
func checkPageParts(o *distillv1.FetchOptions, format string) error {
	if err := extract.CheckTags("--include-tags", o.GetIncludeTags()); err != nil {
		return usageError{err}
	}
	if err := extract.CheckTags("--exclude-tags", o.GetExcludeTags()); err != nil {
		return usageError{err}
	}
	parts := o.GetRawHtml() || o.GetCleanHtml() || o.GetImages() || o.GetHeadMetadata()
	if parts && fetchopts.Format(o) != distillv1.Format_FORMAT_JSON {
		return usageError{fmt.Errorf("--raw-html, --clean-html, --images and --head-metadata come back in the JSON: add --format json or jsonl (--format is %s)", format)}
	}
	return nil
}
