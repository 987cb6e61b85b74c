package pick

import (
	"context"
	"testing"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// BenchmarkPick runs each picker on a page of 5,000 list items, with a
// link each (about 20,000 elements).
func BenchmarkPick(b *testing.B) {
	doc := wide(5000)
	for _, bm := range []struct {
		name string
		opts *distillv1.FetchOptions
	}{
		{"select", &distillv1.FetchOptions{Select: "li a::attr(href)"}},
		{"select-records", &distillv1.FetchOptions{Select: "li", Fields: fields("t=a", "u=a::attr(href)")}},
		{"xpath", &distillv1.FetchOptions{Xpath: "//li[@class='i']/a/@href"}},
		{"find-text", &distillv1.FetchOptions{FindText: "item 4999"}},
		{"find-every-item", &distillv1.FetchOptions{FindRegex: `^item \d+$`}},
		{"similar", &distillv1.FetchOptions{FindText: "item 10", Exact: true, Similar: true}},
	} {
		b.Run(bm.name, func(b *testing.B) {
			p, err := Compile(bm.opts)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Run(context.Background(), doc, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
