package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"google.golang.org/protobuf/proto"

	"distill.dev/gateway/output"
	"distill.dev/proto/fetchopts"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/pick"
	"distill.dev/services/extractor/tokens"
)

// defaultSelectMatches is the select tool's max_matches when the model
// gives none: enough for a page's product grid or a long table, few enough
// that a selector as broad as "a" does not flood the context.
const defaultSelectMatches = 200

var selectParams = []param{
	{name: "url", kind: kindString, required: true,
		desc: "Absolute http or https URL of the page."},
	{name: "select", kind: kindString,
		desc: "CSS selector. Returns each match's text; end it in ::attr(NAME) for an attribute (href and src absolute), ::text for the element's own text, ::html for its HTML."},
	{name: "xpath", kind: kindString,
		desc: "XPath 1.0 instead of select. Elements and text nodes give their text, attributes their value; count(), string() and the like give one value."},
	{name: "fields", kind: kindFields,
		desc: `Turn each match into a record: {"name": "selector", ...}, each run inside the match (CSS; XPath such as ".//h3" with xpath and no similar), its first value or null.`},
	{name: "find_text", kind: kindString,
		desc: "Find the deepest elements whose visible text contains this, any case. Returns [{selector, text}], each selector picking its element alone."},
	{name: "find_regex", kind: kindString,
		desc: "As find_text, with an RE2 regular expression."},
	{name: "exact", kind: kindBool, def: defFalse,
		desc: "find_text or find_regex must match the whole visible text."},
	{name: "case_sensitive", kind: kindBool, def: defFalse,
		desc: "find_text or find_regex match letter case."},
	{name: "similar", kind: kindBool, def: defFalse,
		desc: "From the first match, return every element like it (the other items of its list, grid or table) and one CSS selector picking them all: {selector, matches}, or {selector, records} with fields."},
	{name: "tables", kind: kindBool, def: defFalse,
		desc: "Return the page's data tables as [{headers, rows, caption}] instead of picking."},
	{name: "max_matches", kind: kindInt32, def: def(defaultSelectMatches),
		desc: "Return at most this many matches; 0 = no cap."},
	jsParam,
	timeoutParam,
	allowLocalParam,
}

// selectOptions turns the select tool's arguments into FetchOptions.
func selectOptions(a args) *distillv1.FetchOptions {
	o := &distillv1.FetchOptions{
		Format:        distillv1.Format_FORMAT_JSON,
		Select:        a.str("select"),
		Xpath:         a.str("xpath"),
		Fields:        a.fields("fields"),
		FindText:      a.str("find_text"),
		FindRegex:     a.str("find_regex"),
		Exact:         a.flag("exact"),
		CaseSensitive: a.flag("case_sensitive"),
		Similar:       a.flag("similar"),
		MaxMatches:    a.int32p("max_matches"),
		Js:            distillv1.JsMode(a.enum("js")),
		TimeoutSecs:   a.int32p("timeout_secs"),
		AllowLocal:    a.flag("allow_local"),
	}
	if o.MaxMatches == nil {
		o.MaxMatches = proto.Int32(defaultSelectMatches)
	}
	if a.flag("tables") {
		// The page's tables, not only the main content's.
		o.ExtractTables = true
		o.Profile = distillv1.Profile_PROFILE_FULL
	}
	return o
}

func (h handlers) selectPage(ctx context.Context, a args) ([]string, error) {
	opts := selectOptions(a)
	if err := fetchopts.Validate(opts); err != nil {
		return nil, optionError(err)
	}
	picking := pick.Asked(opts) && (opts.GetSelect() != "" || opts.GetXpath() != "" || opts.GetFindText() != "" || opts.GetFindRegex() != "")
	switch {
	case opts.GetExtractTables() && picking:
		return nil, argError{errors.New("tables takes no select, xpath, find_text or find_regex: one call, one picker")}
	case opts.GetExtractTables() && (opts.GetSimilar() || len(opts.GetFields()) > 0):
		return nil, argError{errors.New("similar and fields do not apply to tables")}
	case opts.GetExtractTables():
		// max_matches has its default; it does not bound tables.
		opts.MaxMatches = nil
	case !picking:
		return nil, argError{errors.New("give one of select, xpath, find_text, find_regex or tables")}
	}
	if err := pick.Check(opts); err != nil {
		return nil, optionError(err)
	}
	res, err := h.svc.Fetch(ctx, &distillv1.FetchRequest{Url: a.str("url"), Options: opts})
	if err != nil {
		return nil, err
	}
	d := res.GetDistilled()
	var texts []string
	var notes []string
	if opts.GetExtractTables() {
		texts, err = jsonText(output.MarshalTables(d.GetTables()))
	} else {
		var left int
		texts, left, err = fitPicked(d.GetPicked(), fetchopts.DefaultMCPMaxOutputTokens)
		if n := int(d.GetPicked().GetOmitted()) + left; n > 0 {
			notes = append(notes, fmt.Sprintf("note: %s left out (max_matches=%d, and about %d tokens at most); narrow the selector or raise max_matches to see them.",
				output.MoreMatches(n), opts.GetMaxMatches(), fetchopts.DefaultMCPMaxOutputTokens))
		}
	}
	if err != nil {
		return nil, err
	}
	if d.GetStatus() >= 400 {
		notes = append([]string{"note: the page answered " + output.HTTPStatus(d.GetStatus()) + ": this is what its error page holds."}, notes...)
	}
	if len(notes) > 0 {
		texts = append(texts, joinLines(notes))
	}
	return texts, nil
}

// fitPicked is p printed on its own, with as many of its matches as fit in
// budget tokens, and how many it left out.
func fitPicked(p *distillv1.Picked, budget int64) ([]string, int, error) {
	if p == nil {
		return nil, 0, errors.New("the server picked nothing: it may be older than the select tool")
	}
	b, err := output.MarshalPicked(p)
	if err != nil || tokens.Count(string(b)) <= budget {
		t, err := jsonText(b, err)
		return t, 0, err
	}
	n := max(len(p.GetValues()), len(p.GetRecords()), len(p.GetElements()))
	keep := func(k int) *distillv1.Picked {
		c := proto.CloneOf(p)
		c.Values = c.Values[:min(k, len(c.Values))]
		c.Records = c.Records[:min(k, len(c.Records))]
		c.Elements = c.Elements[:min(k, len(c.Elements))]
		return c
	}
	// The most matches whose printout fits.
	k := sort.Search(n+1, func(k int) bool {
		b, err := output.MarshalPicked(keep(k))
		return err != nil || tokens.Count(string(b)) > budget
	}) - 1
	k = max(k, 0)
	t, err := jsonText(output.MarshalPicked(keep(k)))
	return t, n - k, err
}

func joinLines(lines []string) string {
	var b bytes.Buffer
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l)
	}
	return b.String()
}

// decodeFields reads {"name": "selector", ...} in the order written: a
// record's fields come out in the order they were asked for.
func decodeFields(name string, v json.RawMessage) ([]*distillv1.PickField, error) {
	bad := fmt.Errorf(`%s must be an object of field names to selectors, like {"title": "h3 a::attr(title)", "price": ".price"}`, name)
	dec := json.NewDecoder(bytes.NewReader(v))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, bad
	}
	var out []*distillv1.PickField
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, bad
		}
		var sel string
		if err := dec.Decode(&sel); err != nil {
			return nil, fmt.Errorf("%s.%v must be a selector string", name, k)
		}
		out = append(out, &distillv1.PickField{Name: k.(string), Selector: sel})
	}
	return out, nil
}
