package render

import (
	"log/slog"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// TestPlanIsWhatTheOptionsAsk checks which phases each option selects,
// without a browser: a plain render opens, guards, loads and reads, and
// each option adds its own phases in the order the page needs them.
func TestPlanIsWhatTheOptionsAsk(t *testing.T) {
	t.Parallel()
	cookie := []*internalv1.Cookie{{Name: "sid", Value: "1"}}
	for _, tt := range []struct {
		name      string
		noCookies bool
		req       *internalv1.RenderRequest
		want      []string
	}{
		{"plain", false, localReq("http://a.test/", nil),
			[]string{"open", "guard", "load", "snapshot"}},
		{"cookies", false, &internalv1.RenderRequest{Url: "http://a.test/", Cookies: cookie},
			[]string{"open", "guard", "cookies", "load", "snapshot", "cookies after"}},
		// A renderer without cookies sets none, yet still reads back
		// none for the session (cookiesAfter answers nil).
		{"cookies, renderer without", true, &internalv1.RenderRequest{Url: "http://a.test/", Cookies: cookie},
			[]string{"open", "guard", "load", "snapshot", "cookies after"}},
		{"steps", false, stepsReq("http://a.test/", `[{"type":"click","selector":"#more"}]`, nil),
			[]string{"open", "guard", "viewport", "close popups", "load", "steps", "snapshot", "cookies after", "step results"}},
		{"scroll", false, localReq("http://a.test/", func(o *distillv1.FetchOptions) { o.Scroll = proto.Int32(0) }),
			[]string{"open", "guard", "viewport", "load", "steps", "snapshot", "step results"}},
		{"withhold without steps", false, &internalv1.RenderRequest{Url: "http://a.test/", WithholdUnsafe: true},
			[]string{"open", "guard", "load", "snapshot"}},
		{"withhold with steps", false, func() *internalv1.RenderRequest {
			r := stepsReq("http://a.test/", `[{"type":"click","selector":"#more"}]`, nil)
			r.WithholdUnsafe = true
			return r
		}(), []string{"open", "guard", "viewport", "close popups", "load", "withhold unsafe", "steps", "snapshot", "cookies after", "step results"}},
		{"artifacts", false, localReq("http://a.test/", func(o *distillv1.FetchOptions) {
			o.Screenshot, o.Pdf, o.Mhtml = "full", true, true
		}), []string{"open", "guard", "viewport", "load", "snapshot", "screenshot", "pdf", "mhtml"}},
		{"capture", false, localReq("http://a.test/", func(o *distillv1.FetchOptions) { o.CaptureTypes = []string{"xhr"} }),
			[]string{"open", "guard", "viewport", "capture", "load", "snapshot", "network"}},
		{"block", false, localReq("http://a.test/", func(o *distillv1.FetchOptions) { o.Block = []string{"images"} }),
			[]string{"open", "guard", "viewport", "load", "snapshot", "blocked count"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var opts []Option
			if tt.noCookies {
				opts = append(opts, WithoutCookies())
			}
			r := New(slog.New(slog.DiscardHandler), opts...)
			var got []string
			for _, p := range r.newRenderJob(nil, nil, tt.req).plan() {
				got = append(got, p.name)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("phases = %q, want %q", got, tt.want)
			}
		})
	}
}
