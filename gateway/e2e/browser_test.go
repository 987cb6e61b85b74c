package e2e

import (
	"bytes"
	"image/png"
	"strings"
	"testing"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// Browser work asked through the public gRPC API of a cluster gateway
// reaches the renderer service, and what it produced comes back.
func TestBrowserWorkThroughTheCluster(t *testing.T) {
	t.Parallel()
	skipShort(t)
	c := startCluster(t, clusterOpts{})
	site := newPages(t, 0)
	opts := &distillv1.FetchOptions{
		AllowLocal: true, Diagnostics: true, Screenshot: "viewport", Block: []string{"images"},
		CaptureTypes: []string{"document"},
		Steps:        `[{"type":"executeJavascript","script":"document.querySelector('h1').textContent"}]`,
	}
	res, err := c.client(0).Fetch(t.Context(), &distillv1.FetchRequest{Url: site.URL + "/shell/5", Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	d := res.GetDistilled()
	if !strings.Contains(d.GetMarkdown(), "Rendered words") {
		t.Errorf("markdown = %q, want the rendered page", d.GetMarkdown())
	}
	if items := d.GetSteps().GetItems(); len(items) != 1 || items[0].GetValue() != `"Shell 5"` {
		t.Errorf("steps = %v, want the heading", items)
	}
	if _, err := png.Decode(bytes.NewReader(d.GetScreenshot())); err != nil {
		t.Errorf("screenshot: %v", err)
	}
	if r := d.GetNetwork().GetResponses(); len(r) != 1 || r[0].GetResourceType() != "document" || !strings.Contains(r[0].GetBody(), "Shell 5") {
		t.Errorf("network = %v, want the document", r)
	}
	if g := d.GetDiagnostics(); g.GetStepsRun() != 1 || g.BlockedResources == nil || !g.GetUsedHeadless() {
		t.Errorf("diagnostics = %v", g)
	}
}

// A session's steps through a cluster gateway: the renderer service
// withholds the sign-in post without confirm, sends it with confirm, and
// the cookie it set comes back into the session's jar.
func TestSessionActThroughTheCluster(t *testing.T) {
	t.Parallel()
	skipShort(t)
	c := startCluster(t, clusterOpts{})
	site := newPages(t, 0)
	client := c.client(0)
	started, err := client.SessionStart(t.Context(), &distillv1.SessionStartRequest{Url: site.URL + "/login", AllowLocal: true, Js: distillv1.JsMode_JS_MODE_OFF})
	if err != nil {
		t.Fatal(err)
	}
	id := started.GetView().GetSessionId()
	steps := `[{"type":"type","selector":"input[name=user]","value":"alice"},{"type":"click","selector":"button"}]`
	logins := func() int {
		site.mu.Lock()
		defer site.mu.Unlock()
		return site.hits["/login"]
	}
	before := logins()
	held, err := client.SessionAct(t.Context(), &distillv1.SessionActRequest{SessionId: id, Steps: steps})
	if err != nil {
		t.Fatal(err)
	}
	if w := held.GetWouldSend(); !held.GetNeedsConfirmation() || w.GetMethod() != "POST" || w.GetBody() != "user=alice" || w.GetStepIndex() != 1 {
		t.Fatalf("act without confirm = %v, want the sign-in withheld", held)
	}
	loads := logins() - before

	before = logins()
	done, err := client.SessionAct(t.Context(), &distillv1.SessionActRequest{SessionId: id, Steps: steps, Confirm: true})
	if err != nil {
		t.Fatal(err)
	}
	if done.GetView().GetCurrentUrl() != site.URL+"/members" || !strings.Contains(done.GetView().GetSnapshot().GetMarkdown(), "Welcome back, alice") {
		t.Fatalf("confirmed act = %v", done.GetView())
	}
	// The same loads of the page, and the post the withheld act did not send.
	if got := logins() - before; got != loads+1 {
		t.Errorf("%d requests for /login during the confirmed act, %d during the withheld one: want exactly one post more", got, loads)
	}
	obs, err := client.SessionObserve(t.Context(), &distillv1.SessionObserveRequest{SessionId: id, Url: site.URL + "/members"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(obs.GetView().GetSnapshot().GetMarkdown(), "Welcome back, alice") {
		t.Errorf("the session lost the cookie the act's sign-in set: %v", obs.GetView().GetSnapshot())
	}
}
