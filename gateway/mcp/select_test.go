package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// The select tool over a real distill, on the fixture pages served on
// loopback.
func TestSelectTool(t *testing.T) {
	site := pages(t)
	cs := connect(t, newService(t))
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"values", map[string]any{"select": "h3 a::attr(href)"},
			`["` + site.URL + `/guides/tide-pools","` + site.URL + `/guides/kelp","` + site.URL + `/guides/anemones","` + site.URL + `/guides/shore-birds"]`},
		{"records, fields in the order given", map[string]any{"select": "article.product_pod", "fields": json.RawMessage(`{"title": "h3 a::attr(title)", "price": ".price_color", "sale": ".sale"}`), "max_matches": 2},
			`[{"title":"Tide Pools of the North","price":"£51.77","sale":null},{"title":"Kelp Forests","price":"£23.10","sale":null}]`},
		{"xpath count", map[string]any{"xpath": "count(//article)"}, `4`},
		{"xpath records", map[string]any{"xpath": "//table[1]/tbody/tr", "fields": json.RawMessage(`{"flag": "./td[1]", "default": "string(./td[2])"}`), "url": site.URL + "/docs"},
			`[{"flag":"--station","default":"none"},{"flag":"--days","default":"7"},{"flag":"--units","default":"metric"}]`},
		{"find", map[string]any{"find_text": "kelp forests"},
			`[{"selector":"#catalogue > ol > li:nth-of-type(2) > article > h3 > a","text":"Kelp Forests"}]`},
		{"similar records", map[string]any{"find_text": "Shore Birds", "similar": true, "fields": map[string]any{"title": "::attr(title)"}},
			`{"selector":"h3 > a","records":[{"title":"Tide Pools of the North"},{"title":"Kelp Forests"},{"title":"Anemones, a Life in the Shallows"},{"title":"Shore Birds"}]}`},
		{"tables, the whole page's", map[string]any{"tables": true, "url": site.URL + "/docs"},
			`[{"headers":["Flag","Default","Meaning"],"rows":[["--station","none","Station ID to predict for"],["--days","7","How many days ahead"],["--units","metric","metric or imperial"]]},{"headers":["Code","Meaning"],"rows":[["0","Success"],["2","Unknown station"]]}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{"url": site.URL + "/grid", "allow_local": true}
			for k, v := range tt.args {
				args[k] = v
			}
			texts, isError := call(t, cs, "select", args)
			if isError || len(texts) == 0 || texts[0] != tt.want {
				t.Errorf("select(%v) = %q (error %t)\nwant %s", tt.args, texts, isError, tt.want)
			}
		})
	}

	// What max_matches leaves out is said in a second block.
	texts, _ := call(t, cs, "select", map[string]any{"url": site.URL + "/wiki", "allow_local": true, "select": "a::attr(href)", "max_matches": 3})
	if len(texts) != 2 || strings.Count(texts[0], `","`) != 2 || !strings.Contains(texts[1], "7 more matches left out (max_matches=3") {
		t.Errorf("max_matches 3 = %q, want three links and a note of the 7 left out", texts)
	}
}

// Bad arguments are refused before anything is fetched: the URL is one the
// policy blocks, and the error is about the argument.
func TestSelectToolRefusesBadArguments(t *testing.T) {
	cs := connect(t, newService(t))
	for _, tt := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, "url is required"},
		{map[string]any{"url": "http://10.0.0.1/"}, "give one of select, xpath, find_text, find_regex or tables"},
		{map[string]any{"url": "http://10.0.0.1/", "select": "a", "xpath": "//a"}, "one picker at a time, got select and xpath"},
		{map[string]any{"url": "http://10.0.0.1/", "select": "a", "tables": true}, "tables takes no select"},
		{map[string]any{"url": "http://10.0.0.1/", "tables": true, "similar": true}, "similar and fields do not apply to tables"},
		{map[string]any{"url": "http://10.0.0.1/", "select": "div:has(p:has(a))"}, `select: invalid selector "div:has(p:has(a))"`},
		{map[string]any{"url": "http://10.0.0.1/", "xpath": "//a[@href"}, `xpath: invalid XPath "//a[@href"`},
		{map[string]any{"url": "http://10.0.0.1/", "xpath": "//a[b[c[d[e]]]]"}, "nests predicates 4 deep"},
		{map[string]any{"url": "http://10.0.0.1/", "find_regex": "(a"}, "find_regex: invalid regular expression"},
		{map[string]any{"url": "http://10.0.0.1/", "select": "a", "fields": map[string]any{"t": "p["}}, "fields t: invalid selector"},
		{map[string]any{"url": "http://10.0.0.1/", "select": "a", "fields": []string{"t=p"}}, "fields must be an object of field names to selectors"},
		{map[string]any{"url": "http://10.0.0.1/", "select": "a", "exact": true}, "exact and case_sensitive apply to find_text and find_regex only"},
		{map[string]any{"url": "http://10.0.0.1/", "select": "a", "max_matches": -1}, "max_matches must be 0 (no cap) or more"},
	} {
		msg := callError(t, cs, "select", tt.args)
		if !strings.HasPrefix(msg, "select: invalid arguments: ") || !strings.Contains(msg, tt.want) {
			t.Errorf("select(%v) = %q, want invalid arguments saying %q", tt.args, msg, tt.want)
		}
	}
}

// A page too long for the output budget loses its last matches, not its
// JSON.
func TestFitPickedCutsWholeMatches(t *testing.T) {
	p := &distillv1.Picked{Kind: distillv1.PickedKind_PICKED_KIND_VALUES, Omitted: 5}
	for range 300 {
		p.Values = append(p.Values, "tide pools of the north and the kelp forests beyond them")
	}
	texts, left, err := fitPicked(p, 1000)
	if err != nil || len(texts) != 1 {
		t.Fatal(texts, err)
	}
	var kept []string
	if err := json.Unmarshal([]byte(texts[0]), &kept); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if len(kept) == 0 || len(kept)+left != 300 || len(kept) > 100 {
		t.Errorf("kept %d and left %d of 300", len(kept), left)
	}
	if whole, left, _ := fitPicked(proto.CloneOf(p), 1_000_000); left != 0 || !strings.HasPrefix(whole[0], `["tide`) {
		t.Errorf("a large budget cut %d", left)
	}
}
