package extract

import (
	"strings"
	"testing"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/internal/golden"
)

// TestPageTypes runs the article profile over one page of each type: the
// classifier's decision is reported, the content drawn as the type wants
// it (every post of a thread, every card of a list, every section of a
// landing page, a product's name, price, hidden description and specs),
// the chrome gone, and the Markdown as reviewed.
func TestPageTypes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		page    string
		url     string
		want    string
		present []string
		absent  []string
	}{
		{
			page: "pagetype/forum.html", url: "https://pottery.example.org/t/kiln-temperature-drifts/4411",
			want: "forum",
			present: []string{
				"# Kiln temperature drifts after an hour", "glazehound", "Feb 3, 2025",
				"drifting forty degrees low", "Check the thermocouple first", "wheelwright",
				"holds the temperature steady",
			},
			absent: []string{"Log in", "Related topics", "Glaze crawling", "Privacy", "Reply"},
		},
		{
			page: "pagetype/thread-noscript.html", url: "https://rowing.example.net/t/tuning-a-damper/812",
			want: "forum",
			present: []string{
				"# Tuning a rowing machine damper", `stroke\_seat`, "my lower back complains",
				"coxless", "between three and five",
			},
			absent: []string{"Privacy"},
		},
		{
			page: "pagetype/product.html", url: "https://northfold.example.com/products/linden-trail-pack-28",
			want: "product",
			present: []string{
				"# Linden Trail Pack 28 L", "€89.00", "ventilated back panel", "## Specifications",
				"28 litres", "Recycled ripstop nylon",
			},
			absent: []string{"Tents", "Add to cart", "You may also like", "Alder Pack", "Free returns", "Customers also bought", "Walnut Flask"},
		},
		{
			page: "pagetype/collection.html", url: "https://hearthware.example.com/collections/tea-kettles",
			want: "collection",
			present: []string{
				"# Tea kettles", "Stovetop and electric kettles", "Whistler Stovetop Kettle", "$39.00",
				"Gooseneck Pour-Over Kettle", "Boils a litre in three minutes", "Clearview Glass Kettle", "$49.00",
			},
			absent: []string{"Filter", "Electric\n", "Next", "Stores", "Dining"},
		},
		{
			page: "pagetype/listing.html", url: "https://worklane.example/remote/data",
			want: "listing",
			present: []string{
				"# Remote data jobs", "Analytics Engineer", "Tidewater Health", "Data Platform Lead",
				"ten thousand parcels", "Machine Learning Engineer", "Junior Data Analyst", "weekly reports",
			},
			absent: []string{"Refine", "Senior", "Post a job", "Terms"},
		},
		{
			page: "pagetype/service.html", url: "https://ledgerly.example.com/",
			want: "service",
			present: []string{
				"# Bookkeeping for small studios", "Send receipts", "## What you get", "Monthly close",
				"A real accountant", "## Pricing", "$49 a month", "$129 a month", "## Questions",
				"Can I switch plans?", "your accountant or ours files them",
			},
			absent: []string{"Log in", "© 2025", "Privacy"},
		},
		{
			page: "docs.html", url: "https://fetchkit.example.dev/docs/retries/",
			want: "documentation",
		},
		{
			page: "blog.html", url: "https://crumb.example.com/2024/03/why-sourdough-needs-time/",
			want: "article",
		},
	}
	for _, tt := range tests {
		t.Run(tt.page, func(t *testing.T) {
			t.Parallel()
			d := run(t, &internalv1.ExtractRequest{
				Html: readPage(t, tt.page), Url: tt.url, Status: 200,
				ContentType: "text/html; charset=utf-8",
				Options:     &distillv1.FetchOptions{Diagnostics: true},
			})
			if got := d.GetDiagnostics().GetPageType(); got != tt.want {
				t.Errorf("page_type %q, want %q", got, tt.want)
			}
			md := d.GetMarkdown()
			for _, s := range tt.present {
				if !strings.Contains(md, s) {
					t.Errorf("markdown lacks %q", s)
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(md, s) {
					t.Errorf("markdown holds %q", s)
				}
			}
			if strings.HasPrefix(tt.page, "pagetype/") {
				golden.Check(t, strings.TrimSuffix(tt.page, ".html")+".md", md)
			}
		})
	}
}
