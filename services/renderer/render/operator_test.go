package render

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/netpolicy"
)

// allow_local is the operator's to grant: without WithAllowLocal a render
// that asks for it is refused before anything is opened.
func TestRenderRefusesAllowLocalWithoutOperator(t *testing.T) {
	t.Parallel()
	site := newHitCounter(t, page("<p>hello</p>"))
	r := New(discard())
	defer func() { _ = r.Close() }()
	_, err := r.Render(context.Background(), localReq(site.URL+"/", nil))
	if failure.CodeOf(err) != failure.InvalidArgument || !strings.Contains(err.Error(), "allow_local refused: this server was not started with --allow-local") {
		t.Fatalf("err = %v (%v), want the operator's refusal", err, failure.CodeOf(err))
	}
	if site.total() != 0 {
		t.Fatal("the page was requested")
	}
}

// The process's own listeners, and the renderer's own egress proxies, are
// out of reach of a render with allow_local: as the page itself and as
// anything the page asks for.
func TestRenderRefusesOwnListeners(t *testing.T) {
	t.Parallel()
	requireChromium(t)
	own := netpolicy.NewOwn()
	self := newHitCounter(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		_, _ = io.WriteString(w, "distill's own port")
	}))
	own.Add(self.Listener.Addr(), "gRPC port")
	other := newHitCounter(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		_, _ = io.WriteString(w, "reached")
	}))
	// A proxy of another render, live while this one runs.
	eg, err := startEgress(discard(), netpolicy.Policy{AllowLoopback: true, Own: own}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer eg.close()
	site := newHitCounter(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>t</title><p>page</p><pre id="out"></pre><script>
Promise.all([%q, %q, %q].map(u => fetch(u).then(r => "ok", e => "refused"))).then(rs => {
  document.getElementById("out").textContent = rs.join(",");
  const d = document.createElement("div"); d.id = "done"; document.body.appendChild(d);
});
</script>`, self.URL+"/fetch", eg.proxyURL()+"/fetch", other.URL+"/fetch")
	}))

	r := New(discard(), WithAllowLocal(true), WithOwn(own))
	defer func() { _ = r.Close() }()

	for _, target := range []string{self.URL + "/", eg.proxyURL() + "/"} {
		t.Run("navigate to "+target, func(t *testing.T) {
			_, err := r.Render(context.Background(), localReq(target, nil))
			if failure.CodeOf(err) != failure.Blocked || !strings.Contains(err.Error(), "distill's own") {
				t.Fatalf("err = %v (%v), want Blocked naming distill's own listener", err, failure.CodeOf(err))
			}
		})
	}
	t.Run("requests of the page", func(t *testing.T) {
		res, err := r.Render(context.Background(), localReq(site.URL+"/", func(o *distillv1.FetchOptions) { o.JsWaitFor = "#done" }))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(res.GetHtml()), "refused,refused,ok") {
			t.Fatalf("the page saw %s, want its requests to distill's own listeners refused and the other server reached", res.GetHtml())
		}
	})
	if n := self.total(); n != 0 {
		t.Errorf("distill's own listener was reached %d times", n)
	}
	if other.count("/fetch") != 1 {
		t.Errorf("the other loopback server was not reached: the refusals prove nothing")
	}
}
