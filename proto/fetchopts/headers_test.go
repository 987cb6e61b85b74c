package fetchopts

import (
	"strings"
	"testing"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

func TestCheckHeaders(t *testing.T) {
	many := map[string]string{}
	for i := range MaxHeaders + 1 {
		many["X-H"+strings.Repeat("a", i)] = "v"
	}
	for _, tc := range []struct {
		name    string
		headers map[string]string
		want    string
	}{
		{"none", nil, ""},
		{"ordinary", map[string]string{"Cookie": "a=b", "User-Agent": "bot/1", "x-team": "tides"}, ""},
		{"host", map[string]string{"host": "example.org"}, "Host is the fetcher's"},
		{"framing", map[string]string{"Transfer-Encoding": "chunked"}, "Transfer-Encoding is the fetcher's"},
		{"encoding", map[string]string{"Accept-Encoding": "br"}, "Accept-Encoding is the fetcher's"},
		{"proxy", map[string]string{"Proxy-Authorization": "x"}, "Proxy-Authorization is the fetcher's"},
		{"bad name", map[string]string{"X A": "b"}, `"X A" is not a header name`},
		{"line break", map[string]string{"X-A": "b\r\nHost: evil"}, "line break"},
		{"too many", many, "at most 32"},
		{"too large", map[string]string{"X-A": strings.Repeat("b", MaxHeaderBytes)}, "over the limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(&distillv1.FetchOptions{Headers: tc.headers})
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Validate = %v, want %q", err, tc.want)
			}
		})
	}
}
