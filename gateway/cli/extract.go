package cli

import (
	"context"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"distill.dev/gateway/output"
	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/extract"
)

// stdinName is the file argument that reads standard input.
const stdinName = "-"

// extractCmd is one `distill extract`: the flags cobra fills and the
// files it was given; run does the work.
type extractCmd struct {
	outputFlags
	base     string
	maxBytes int64

	g     *globals
	fs    *pflag.FlagSet
	stdin io.Reader
	files []string
}

func newExtractCmd(g *globals) *cobra.Command {
	c := &extractCmd{g: g, maxBytes: fetchopts.DefaultMaxBytes}
	cmd := &cobra.Command{
		Use:   "extract [--url URL] FILE...",
		Short: "Distill saved HTML files, with no network access",
		Long: "Distill saved pages from files (or - for standard input) with the same output\n" +
			"flags as fetch. Nothing is fetched: relative links resolve against --url when\n" +
			"given, else against the file's own file:// URL (and such links, not being\n" +
			"http or https, are left out of links and actions).\n\n" +
			"Several files print like a batch, in input order.",
		Example: "  distill extract saved/page.html\n" +
			"  curl -s https://example.com/ | distill extract --url https://example.com/ -\n" +
			"  distill extract --format json --links archive/*.html",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			c.fs, c.stdin, c.files = cmd.Flags(), cmd.InOrStdin(), files
			return c.run(cmd.Context())
		},
	}
	c.register(cmd.Flags())
	return cmd
}

// register declares extract's flags: fetch's output flags, then
// extract's own.
func (c *extractCmd) register(fs *pflag.FlagSet) {
	c.outputFlags.register(fs)
	fs.StringVar(&c.base, "url", "", "URL the page was served from: the base for relative links (default: the file's file:// URL)")
	fs.Int64Var(&c.maxBytes, "max-bytes", c.maxBytes, "read at most this many bytes of each file; a longer one is distilled from its beginning, with a note on stderr")
	fs.SortFlags = false
}

// run distills the files and prints them. Everything the command line
// asks for that cannot be done is refused before any file is read.
func (c *extractCmd) run(ctx context.Context) error {
	opts, err := c.options()
	if err != nil {
		return err
	}
	if err := c.check(opts); err != nil {
		return err
	}
	items := extractFiles(ctx, c.g, c.files, c.base, opts, c.stdin)
	return (&printer{g: c.g, format: c.format.value, opts: opts}).printAll(items, len(c.files) > 1)
}

// options are the FetchOptions the flags give, with --diff-with's file
// read.
func (c *extractCmd) options() (*distillv1.FetchOptions, error) {
	if err := checkMaxBytes(c.fs, c.maxBytes); err != nil {
		return nil, err
	}
	opts := &distillv1.FetchOptions{}
	c.apply(c.fs, opts)
	setIfChanged(c.fs, "max-bytes", &opts.MaxBytes, &c.maxBytes)
	if err := c.readDiffWith(opts); err != nil {
		return nil, usageError{err}
	}
	return opts, nil
}

// check refuses options that cannot run, and files that cannot all be
// read.
func (c *extractCmd) check(opts *distillv1.FetchOptions) error {
	if opts.GetDiffWith() != nil && len(c.files) > 1 {
		return usagef("--diff-with compares one page with its earlier answer; got %d files", len(c.files))
	}
	if err := fetchopts.Validate(opts); err != nil {
		return usageError{err}
	}
	if err := extract.CheckSelector(opts.GetSelector()); err != nil {
		return usageError{err}
	}
	if err := checkPageParts(opts, c.format.value); err != nil {
		return err
	}
	if err := checkPick(opts); err != nil {
		return err
	}
	if c.base != "" {
		if err := checkBase(c.base); err != nil {
			return usageError{err}
		}
	}
	if n := countStdin(c.files); n > 1 {
		return usagef("standard input (-) can be read only once, got it %d times", n)
	}
	return nil
}

func checkBase(base string) error {
	scheme, _, ok := strings.Cut(base, "://")
	switch {
	case !ok:
		return fmt.Errorf("--url %q is not an absolute URL", base)
	case scheme != "http" && scheme != "https" && scheme != "file":
		return fmt.Errorf("--url %q: scheme %q is not http, https or file", base, scheme)
	}
	return nil
}

func countStdin(files []string) int {
	n := 0
	for _, f := range files {
		if f == stdinName {
			n++
		}
	}
	return n
}

// extractFiles distills each file, using every core, and returns the
// results in input order. Extraction is pure CPU work: no queue is needed.
func extractFiles(ctx context.Context, g *globals, files []string, base string, opts *distillv1.FetchOptions, stdin io.Reader) []output.BatchItem {
	ex := extract.New(g.logger(), extract.WithMemoryBudget(int64(g.extractMemory)<<20), extract.WithPDFCacheDir(g.pdfCacheDir))
	defer ex.Close()
	items := make([]output.BatchItem, len(files))
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(files)) {
		wg.Go(func() {
			for i := range work {
				items[i] = extractFile(ctx, ex, files[i], base, opts, stdin)
			}
		})
	}
	for i := range files {
		work <- i
	}
	close(work)
	wg.Wait()
	return items
}

func extractFile(ctx context.Context, ex *extract.Extractor, name, base string, opts *distillv1.FetchOptions, stdin io.Reader) output.BatchItem {
	item := output.BatchItem{URL: name}
	body, truncated, pageURL, contentType, err := readPage(name, base, fetchopts.MaxBytes(opts), stdin)
	if err != nil {
		item.Err = err
		return item
	}
	res, err := ex.Extract(ctx, &internalv1.ExtractRequest{
		Html:        body,
		Url:         pageURL,
		Status:      200,
		ContentType: contentType,
		Options:     opts,
	})
	if err != nil {
		item.Err = fmt.Errorf("extract %s: %w", name, err)
		return item
	}
	item.Result = res.GetDistilled()
	// The printer notes a cut on stderr; the diagnostics say so only when
	// they were asked for.
	item.Truncated = truncated
	if truncated && opts.GetDiagnostics() {
		if item.Result.Diagnostics == nil {
			item.Result.Diagnostics = &distillv1.Diagnostics{}
		}
		item.Result.Diagnostics.TruncatedBody = true
	}
	return item
}

// readPage reads a saved page, at most its first maxBytes, and returns
// those bytes, whether there were more, the URL it stands for and its
// media type ("" for HTML).
func readPage(name, base string, maxBytes int64, stdin io.Reader) ([]byte, bool, string, string, error) {
	var r io.Reader
	pageURL := base
	contentType := ""
	if name == stdinName {
		r = stdin
		if pageURL == "" {
			pageURL = "file:///dev/stdin"
		}
	} else {
		file, err := os.Open(name)
		if err != nil {
			return nil, false, "", "", failure.Wrap(failure.InvalidArgument, err, "read %s", name)
		}
		defer file.Close()
		if info, err := file.Stat(); err == nil && info.IsDir() {
			return nil, false, "", "", failure.New(failure.InvalidArgument, "read %s: is a directory", name)
		}
		r = file
		if pageURL == "" {
			abs, err := filepath.Abs(name)
			if err != nil {
				return nil, false, "", "", failure.Wrap(failure.InvalidArgument, err, "read %s", name)
			}
			pageURL = "file://" + filepath.ToSlash(abs)
		}
		contentType = mediaTypeOf(name)
	}
	body, err := io.ReadAll(io.LimitReader(r, maxBytes+1))
	if err != nil {
		return nil, false, "", "", failure.Wrap(failure.InvalidArgument, err, "read %s", name)
	}
	if int64(len(body)) > maxBytes {
		return body[:maxBytes:maxBytes], true, pageURL, contentType, nil
	}
	return body, false, pageURL, contentType, nil
}

// mediaTypeOf names a saved file's type by its extension; HTML and unknown
// extensions give "", which the extractor reads as HTML.
func mediaTypeOf(name string) string {
	switch ext := strings.ToLower(filepath.Ext(name)); ext {
	case "", ".html", ".htm", ".shtml", ".xhtml":
		return ""
	default:
		t, _, err := mime.ParseMediaType(mime.TypeByExtension(ext))
		if err != nil {
			return ""
		}
		return t
	}
}
