package extract

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// actionsPageURL is where the action pages are served from. The action
// tree itself is tested in the actions package; these tests are about
// when extract asks for it, of what, and with what limit.
const actionsPageURL = "https://www.harbour.example.gov/pages/4711"

func actionsReq(body string, opts *distillv1.FetchOptions) *internalv1.ExtractRequest {
	if opts == nil {
		opts = &distillv1.FetchOptions{}
	}
	opts.ExtractActions = true
	return &internalv1.ExtractRequest{Html: []byte(body), Url: actionsPageURL, Status: 200, Options: opts}
}

func TestActionsPresence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		req       *internalv1.ExtractRequest
		wantNil   bool
		wantCount int32
	}{
		{name: "not asked", req: htmlReq(`<a href="/a">A</a>`, &distillv1.FetchOptions{Diagnostics: true}), wantNil: true},
		{name: "asked, none on the page", req: actionsReq(`<p>Nothing to do here.</p>`, &distillv1.FetchOptions{Diagnostics: true})},
		{
			name: "asked, a text document",
			req: &internalv1.ExtractRequest{Html: []byte("<a href=/x>not markup</a>"), Url: actionsPageURL, ContentType: "text/plain",
				Options: &distillv1.FetchOptions{ExtractActions: true, Diagnostics: true}},
		},
		{
			name:      "asked, one of each",
			req:       actionsReq(`<a href="/a">A</a><a href="/f.pdf">F</a><button>B</button><form><input name="q"></form>`, &distillv1.FetchOptions{Diagnostics: true}),
			wantCount: 4,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := run(t, tt.req)
			if tt.wantNil != (d.GetActions() == nil) {
				t.Fatalf("actions = %v, want nil: %v", d.GetActions(), tt.wantNil)
			}
			if got := d.GetDiagnostics().GetActionCount(); got != tt.wantCount {
				t.Errorf("action_count = %d, want %d", got, tt.wantCount)
			}
		})
	}
}

// TestActionsWholePage checks that actions come from the whole page
// whatever part of it the content is: furniture included.
func TestActionsWholePage(t *testing.T) {
	t.Parallel()
	opts := map[string]*distillv1.FetchOptions{
		"article":  {},
		"full":     {Profile: distillv1.Profile_PROFILE_FULL},
		"metadata": {Profile: distillv1.Profile_PROFILE_METADATA},
		"selector": {Selector: "main h1"},
	}
	want := run(t, actionsReq(articlePage, &distillv1.FetchOptions{Profile: distillv1.Profile_PROFILE_FULL})).GetActions()
	var hrefs []string
	for _, l := range want.GetLinks() {
		hrefs = append(hrefs, l.GetHref())
	}
	if !strings.Contains(strings.Join(hrefs, " "), "/about") || !strings.Contains(strings.Join(hrefs, " "), "/world/") {
		t.Fatalf("links %v lack the page's furniture", hrefs)
	}
	for name, o := range opts {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := run(t, actionsReq(articlePage, o)).GetActions()
			if !proto.Equal(got, want) {
				t.Errorf("actions = %v, want %v", got, want)
			}
		})
	}
}

// TestMaxActions checks how options.max_actions caps the tree and what
// diagnostics count; actions.TestLimit has what a cap keeps.
func TestMaxActions(t *testing.T) {
	t.Parallel()
	var page strings.Builder
	for i := range 5 {
		fmt.Fprintf(&page, `<a href="/p%d">Page %d</a><a href="/f%d.pdf">File %d</a><button>Button %d</button><form action="/s%d"></form>`, i, i, i, i, i, i)
	}

	tests := []struct {
		name      string
		limit     *int32
		perList   int // entries in each category
		wantCount int32
	}{
		{name: "unset", limit: nil, perList: 5, wantCount: 20},
		{name: "three", limit: proto.Int32(3), perList: 3, wantCount: 12},
		{name: "one", limit: proto.Int32(1), perList: 1, wantCount: 4},
		{name: "zero is no cap", limit: proto.Int32(0), perList: 5, wantCount: 20},
		{name: "above the page", limit: proto.Int32(100), perList: 5, wantCount: 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := run(t, actionsReq(page.String(), &distillv1.FetchOptions{MaxActions: tt.limit, Diagnostics: true}))
			a := d.GetActions()
			if a == nil {
				t.Fatal("actions = nil")
			}
			for cat, n := range map[string]int{"links": len(a.GetLinks()), "downloads": len(a.GetDownloads()), "buttons": len(a.GetButtons()), "forms": len(a.GetForms())} {
				if n != tt.perList {
					t.Errorf("%d %s, want %d", n, cat, tt.perList)
				}
			}
			if got := d.GetDiagnostics().GetActionCount(); got != tt.wantCount {
				t.Errorf("action_count = %d, want %d", got, tt.wantCount)
			}
		})
	}
}
