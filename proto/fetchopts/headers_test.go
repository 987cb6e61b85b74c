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

// A page fetched with headers is read as fetched: js=auto does not render
// it, and a render asked for is refused rather than done without them.
func TestHeadersAreNotRendered(t *testing.T) {
	h := map[string]string{"Cookie": "a=b"}
	if m := JS(&distillv1.FetchOptions{Headers: h}); m != distillv1.JsMode_JS_MODE_OFF {
		t.Errorf("JS with headers = %v, want off", m)
	}
	if m := JS(&distillv1.FetchOptions{}); m != distillv1.JsMode_JS_MODE_AUTO {
		t.Errorf("JS without headers = %v, want auto", m)
	}
	for name, o := range map[string]*distillv1.FetchOptions{
		"js always":  {Headers: h, Js: distillv1.JsMode_JS_MODE_ALWAYS},
		"js auto":    {Headers: h, Js: distillv1.JsMode_JS_MODE_AUTO},
		"screenshot": {Headers: h, Screenshot: ScreenshotViewport},
	} {
		if err := Validate(o); err == nil || !strings.Contains(err.Error(), "headers go with the fetch alone") {
			t.Errorf("%s: Validate = %v", name, err)
		}
	}
	if err := Validate(&distillv1.FetchOptions{Headers: h, Js: distillv1.JsMode_JS_MODE_OFF}); err != nil {
		t.Errorf("headers with js off: %v", err)
	}
}
