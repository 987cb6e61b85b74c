package crawl

import (
	"testing"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// TestPageOptionsCarryTheQuery checks that a crawl's query reaches the
// extractor's block filter in the formats made of Markdown blocks, and
// that a text or html crawl keeps its pages whole.
func TestPageOptionsCarryTheQuery(t *testing.T) {
	for _, tc := range []struct {
		format distillv1.Format
		own    string
		want   string
	}{
		{distillv1.Format_FORMAT_UNSPECIFIED, "", "rotate the key"},
		{distillv1.Format_FORMAT_MARKDOWN, "", "rotate the key"},
		{distillv1.Format_FORMAT_JSON, "", "rotate the key"},
		{distillv1.Format_FORMAT_LLM, "", "rotate the key"},
		{distillv1.Format_FORMAT_TEXT, "", ""},
		{distillv1.Format_FORMAT_HTML, "", ""},
		{distillv1.Format_FORMAT_MARKDOWN, "a question of the caller's", "a question of the caller's"},
	} {
		user := &distillv1.FetchOptions{Format: tc.format, Query: tc.own}
		got := pageOptions(Request{Query: "  rotate the key "}, user)
		if got.GetQuery() != tc.want {
			t.Errorf("format %v, own query %q: page query %q, want %q", tc.format, tc.own, got.GetQuery(), tc.want)
		}
		if user.GetQuery() != tc.own {
			t.Errorf("format %v: the caller's options were changed", tc.format)
		}
	}
	if got := pageOptions(Request{}, &distillv1.FetchOptions{}); got.GetQuery() != "" {
		t.Errorf("a crawl without a query filters its pages by %q", got.GetQuery())
	}
}
