// Package pick picks values, records and elements out of a parsed page:
// CSS selectors with ::attr(NAME), ::text and ::html, XPath 1.0
// expressions, elements found by their visible text, and every element
// like an example. Its functions are pure functions of the page; each
// runs on the whole page before the extractor chooses its content, and
// each is bounded and stops when its context ends.
package pick

import (
	"context"
	"net/url"
	"regexp"
	"strings"

	"github.com/antchfx/xpath"
	"golang.org/x/net/html"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// Bounds on what a picker asks for and returns.
const (
	// MaxMatches is the most matches a picker returns; max_matches may
	// lower it. The rest are counted in Picked.omitted.
	MaxMatches = 10000
	// MaxFields is the most fields a record may have.
	MaxFields = 32
	// MaxPatternBytes is the longest find_text or find_regex accepted.
	MaxPatternBytes = 1024
)

// which is the picker a request asked for.
type which int

const (
	pickNone which = iota
	pickCSS
	pickXPath
	pickFind
)

// Picker is a checked and compiled picking request.
type Picker struct {
	which   which
	css     cssPick
	xpath   *xpath.Expr
	find    *regexp.Regexp
	fields  []field
	similar bool
	max     int
	// moves is the XPath move budget, MaxXPathMoves but in tests.
	moves int
}

// field is one --field: CSS, or XPath when the picker is xpath without
// similar.
type field struct {
	name  string
	css   cssPick
	xpath *xpath.Expr
}

// Asked reports whether opts ask for any picking.
func Asked(opts *distillv1.FetchOptions) bool {
	return opts.GetSelect() != "" || opts.GetXpath() != "" || opts.GetFindText() != "" || opts.GetFindRegex() != "" ||
		len(opts.GetFields()) > 0 || opts.GetSimilar() || opts.GetExact() || opts.GetCaseSensitive() || opts != nil && opts.MaxMatches != nil
}

// Check reports whether the picking options of opts can run: nil when
// they can or none is set, else an InvalidArgument error of one line
// naming the option and the problem. Every door calls it before fetching.
func Check(opts *distillv1.FetchOptions) error {
	_, err := Compile(opts)
	return err
}

// Compile checks and compiles the picking options of opts; it returns nil
// and no error when none is set.
func Compile(opts *distillv1.FetchOptions) (*Picker, error) {
	if !Asked(opts) {
		return nil, nil
	}
	p := &Picker{similar: opts.GetSimilar(), max: MaxMatches, moves: MaxXPathMoves}
	var set []string
	if s := opts.GetSelect(); s != "" {
		set = append(set, "--select")
		c, err := compileCSSPick(s)
		if err != nil {
			return nil, optionError("--select", err)
		}
		if c.sel == nil {
			return nil, failure.New(failure.InvalidArgument, "--select %s picks no elements: put a selector before the pseudo-element", quote(s))
		}
		p.which, p.css = pickCSS, c
	}
	if x := opts.GetXpath(); x != "" {
		set = append(set, "--xpath")
		e, err := CompileXPath(x)
		if err != nil {
			return nil, optionError("--xpath", err)
		}
		p.which, p.xpath = pickXPath, e
	}
	text, re := opts.GetFindText(), opts.GetFindRegex()
	if text != "" {
		set = append(set, "--find-text")
	}
	if re != "" {
		set = append(set, "--find-regex")
	}
	if len(set) > 1 {
		return nil, failure.New(failure.InvalidArgument, "one picker at a time, got %s", strings.Join(set, " and "))
	}
	if text != "" || re != "" {
		m, err := compileFind(text, re, opts.GetExact(), opts.GetCaseSensitive())
		if err != nil {
			return nil, err
		}
		p.which, p.find = pickFind, m
	}
	switch {
	case p.which == pickNone:
		return nil, failure.New(failure.InvalidArgument, "%s needs a picker: --select, --xpath, --find-text or --find-regex", firstSetModifier(opts))
	case p.which != pickFind && (opts.GetExact() || opts.GetCaseSensitive()):
		return nil, failure.New(failure.InvalidArgument, "--exact and --case-sensitive apply to --find-text and --find-regex only")
	case p.which == pickFind && len(opts.GetFields()) > 0 && !p.similar:
		return nil, failure.New(failure.InvalidArgument, "--field needs --select, --xpath or --similar: found elements are {selector, text}")
	}
	if n := opts.MaxMatches; n != nil {
		if *n < 0 {
			return nil, failure.New(failure.InvalidArgument, "--max-matches must be 0 (no cap) or more, got %d", *n)
		}
		if *n > 0 && int(*n) < p.max {
			p.max = int(*n)
		}
	}
	fields, err := compileFields(opts.GetFields(), p.which == pickXPath && !p.similar)
	if err != nil {
		return nil, err
	}
	p.fields = fields
	return p, nil
}

// firstSetModifier names the option that asked for picking without a
// picker.
func firstSetModifier(opts *distillv1.FetchOptions) string {
	switch {
	case len(opts.GetFields()) > 0:
		return "--field"
	case opts.GetSimilar():
		return "--similar"
	case opts.GetExact():
		return "--exact"
	case opts.GetCaseSensitive():
		return "--case-sensitive"
	default:
		return "--max-matches"
	}
}

func compileFields(in []*distillv1.PickField, asXPath bool) ([]field, error) {
	if len(in) > MaxFields {
		return nil, failure.New(failure.InvalidArgument, "--field: %d fields, over the limit of %d", len(in), MaxFields)
	}
	seen := map[string]bool{}
	out := make([]field, 0, len(in))
	for _, f := range in {
		name := f.GetName()
		switch {
		case strings.TrimSpace(name) == "":
			return nil, failure.New(failure.InvalidArgument, "--field: a field has no name; write NAME=SELECTOR")
		case seen[name]:
			return nil, failure.New(failure.InvalidArgument, "--field: %s is given twice", quote(name))
		case strings.TrimSpace(f.GetSelector()) == "":
			return nil, failure.New(failure.InvalidArgument, "--field %s has no selector; write %s=SELECTOR", quote(name), name)
		}
		seen[name] = true
		fd := field{name: name}
		var err error
		if asXPath {
			fd.xpath, err = CompileXPath(f.GetSelector())
		} else {
			fd.css, err = compileCSSPick(f.GetSelector())
		}
		if err != nil {
			return nil, optionError("--field "+name, err)
		}
		out = append(out, fd)
	}
	return out, nil
}

// optionError puts the option's name in front of a compile error.
func optionError(option string, err error) error {
	return failure.Wrap(failure.CodeOf(err), err, "%s", option)
}

// Run picks from doc, the whole parsed page; base resolves the links that
// href and src attributes hold. It returns what Distilled.picked holds.
func (p *Picker) Run(ctx context.Context, doc *html.Node, base *url.URL) (*distillv1.Picked, error) {
	r := &run{p: p, doc: doc, base: base, ctx: ctx}
	return r.pick()
}

// Empty is the result of the picker on a page without elements (a PDF, a
// text file): nothing found, in the shape asked for.
func (p *Picker) Empty() *distillv1.Picked {
	out := &distillv1.Picked{Kind: distillv1.PickedKind_PICKED_KIND_VALUES, Similar: p.similar}
	switch {
	case len(p.fields) > 0:
		out.Kind = distillv1.PickedKind_PICKED_KIND_RECORDS
	case p.which == pickFind || p.similar:
		out.Kind = distillv1.PickedKind_PICKED_KIND_ELEMENTS
	}
	return out
}
