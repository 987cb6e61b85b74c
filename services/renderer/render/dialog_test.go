package render

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	rodproto "github.com/go-rod/rod/lib/proto"
	"google.golang.org/protobuf/proto"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/netpolicy"
)

// A dialog left open stops the page's scripts and its load until the
// render's time runs out. Each page writes what it did after its dialog
// returned; the render must come back with it, well within the timeout.
func TestRenderDismissesDialogs(t *testing.T) {
	t.Parallel()
	requireChromium(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/alert", page(`<p id="out">before</p><script>alert('hello'); document.getElementById('out').textContent = 'after alert'</script>`))
	mux.HandleFunc("/confirm", page(`<p id="out">before</p><script>document.getElementById('out').textContent = 'confirm said ' + confirm('sure?')</script>`))
	mux.HandleFunc("/prompt", page(`<p id="out">before</p><script>document.getElementById('out').textContent = 'prompt said ' + prompt('name?', 'x')</script>`))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	for _, tt := range []struct{ path, want string }{
		{"/alert", "after alert"},
		{"/confirm", "confirm said false"},
		{"/prompt", "prompt said null"},
	} {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			res, err := shared.Render(context.Background(), localReq(srv.URL+tt.path, func(o *distillv1.FetchOptions) {
				o.TimeoutSecs = proto.Int32(8)
			}))
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			if !strings.Contains(string(res.GetHtml()), tt.want) {
				t.Fatalf("html lacks %q:\n%s", tt.want, res.GetHtml())
			}
		})
	}
}

// Chromium asks before leaving a page only once the page had a user
// gesture, which a render never makes; a page driven further (a click, as
// a session may make) does ask, and must still be let go.
func TestRenderLeavesAPageThatAsksBeforeUnload(t *testing.T) {
	t.Parallel()
	requireChromium(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/stay", page(`<a id="go" href="/left">leave</a><script>
		addEventListener('beforeunload', e => { e.preventDefault(); e.returnValue = 'stay?'; });</script>`))
	mux.HandleFunc("/left", page(`<p id="left">left the page</p>`))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	inst, err := shared.browser(ctx)
	if err != nil {
		t.Fatal(err)
	}
	policy := netpolicy.Policy{AllowLoopback: true}
	tab, err := shared.openPage(ctx, inst, policy)
	if err != nil {
		t.Fatal(err)
	}
	defer tab.close()
	stop, err := shared.guardPage(ctx, tab, newGuard(policy, net.DefaultResolver))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := tab.navigate(srv.URL + "/stay"); err != nil {
		t.Fatal(err)
	}
	link, err := tab.page.Element("#go")
	if err != nil {
		t.Fatal(err)
	}
	// A real click: the gesture that lets the page ask.
	if err := link.Click(rodproto.InputMouseButtonLeft, 1); err != nil {
		t.Fatalf("click: %v", err)
	}
	if _, err := tab.page.Element("#left"); err != nil {
		t.Fatalf("the page was not left: %v", err)
	}
}
