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
