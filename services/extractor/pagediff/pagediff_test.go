package pagediff

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

func TestCompare(t *testing.T) {
	t.Parallel()
	old := &distillv1.Distilled{FinalUrl: "https://x.example/p", Status: 200, Title: "Pricing",
		Markdown: "# Pricing\n\nIntro.\n\n| Plan | Price |\n|---|---|\n| Team | $49 |\n\nDiscounts: see [sales](https://x.example/contact).\n\n```\ncode [x](https://y.example/)\n```"}
	tests := []struct {
		name    string
		cur     *distillv1.Distilled
		changed bool
		check   func(t *testing.T, d *distillv1.PageDiff)
	}{
		{name: "unchanged", cur: proto.CloneOf(old)},
		{
			name: "a price changed, a paragraph replaced, a title",
			cur: &distillv1.Distilled{FinalUrl: "https://x.example/p", Status: 200, Title: "Pricing and plans",
				Markdown: "# Pricing\n\nIntro.\n\n| Plan | Price |\n|---|---|\n| Team | $59 |\n\nYearly: see [billing](https://x.example/yearly).\n\n```\ncode [x](https://y.example/)\n```"},
			changed: true,
			check: func(t *testing.T, d *distillv1.PageDiff) {
				if len(d.Fields) != 1 || d.Fields[0].Field != "title" || d.Fields[0].New != "Pricing and plans" {
					t.Errorf("fields %v", d.Fields)
				}
				if len(d.Blocks) != 2 || d.Blocks[0].Change != "changed" || !strings.Contains(d.Blocks[0].GetNew(), "$59") ||
					d.Blocks[1].Change != "changed" || strings.Join(d.Blocks[1].HeadingPath, "/") != "Pricing" {
					t.Errorf("blocks %v", d.Blocks)
				}
				if strings.Join(d.LinksAdded, " ") != "https://x.example/yearly" || strings.Join(d.LinksRemoved, " ") != "https://x.example/contact" {
					t.Errorf("links added %v removed %v", d.LinksAdded, d.LinksRemoved)
				}
				if !strings.Contains(d.Unified, "-| Team | $49 |\n+| Team | $59 |") || !strings.HasPrefix(d.Unified, "--- https://x.example/p (before)\n+++ https://x.example/p (now)") {
					t.Errorf("unified:\n%s", d.Unified)
				}
			},
		},
		{
			name:    "a block added and one removed",
			cur:     &distillv1.Distilled{FinalUrl: "https://x.example/p", Status: 200, Title: "Pricing", Markdown: "# Pricing\n\n- new list\n\n| Plan | Price |\n|---|---|\n| Team | $49 |\n\nDiscounts: see [sales](https://x.example/contact).\n\n```\ncode [x](https://y.example/)\n```"},
			changed: true,
			check: func(t *testing.T, d *distillv1.PageDiff) {
				if len(d.Blocks) != 2 || d.Blocks[0].Change != "removed" || d.Blocks[0].GetOld() != "Intro." || d.Blocks[0].New != nil ||
					d.Blocks[1].Change != "added" || d.Blocks[1].GetNew() != "- new list" {
					t.Errorf("blocks %v", d.Blocks)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := Compare(old, tt.cur)
			if d.Changed != tt.changed {
				t.Fatalf("changed = %t, want %t: %v", d.Changed, tt.changed, d)
			}
			if !tt.changed && (len(d.Blocks)+len(d.Fields)+len(d.LinksAdded)+len(d.LinksRemoved) > 0 || d.Unified != "") {
				t.Errorf("an unchanged page has changes: %v", d)
			}
			if tt.check != nil {
				tt.check(t, d)
			}
		})
	}
}
