package extract

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// largePage generates about size bytes of a realistic long page: site
// furniture around an article of sections with paragraphs, links, lists
// and tables, as a long report or a forum thread dumps them.
func largePage(size int) []byte {
	// One buffer, returned as it is: the page is in memory once, as a
	// caller holds it, and the peak measures the extraction.
	var b bytes.Buffer
	b.Grow(size + 4096)
	b.WriteString(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>The Annual Survey | Coast Report</title>
<meta name="description" content="Every pool, every tide, every count."><link rel="stylesheet" href="/s.css"></head><body>
<header class="site-header"><nav><a href="/">Home</a> <a href="/reports/">Reports</a> <a href="/about">About</a></nav></header>
<div class="layout"><aside class="sidebar"><ul><li><a href="/popular/1">Popular one</a></li><li><a href="/popular/2">Popular two</a></li></ul></aside>
<main><article><h1>The Annual Survey</h1><p class="byline">By Mara Quill</p>`)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `<section id="s%d"><h2>Pool %d</h2>
<p>At low tide pool %d opened onto the rock shelf, and the survey team counted what it held: anemones closed against the air, hermit crabs trading shells, and a <a href="/species/%d">goby</a> that would not keep still for the camera.</p>
<p>Water temperature held at %d.%d degrees through the morning, a little under the season's average, and the team noted <em>three</em> new arrivals since the spring count; see <a href="https://data.example.org/pools/%d">the raw data</a>.</p>
<ul><li>Anemones: %d</li><li>Hermit crabs: %d</li><li>Limpets: %d</li></ul>
<table class="counts"><thead><tr><th>Species</th><th>Spring</th><th>Autumn</th></tr></thead><tbody>
<tr><td>Anemone</td><td>%d</td><td>%d</td></tr><tr><td>Hermit crab</td><td>%d</td><td>%d</td></tr><tr><td>Limpet</td><td>%d</td><td>%d</td></tr></tbody></table>
<div class="share"><a href="/share?p=%d">Share</a> <a href="#s%d">Link here</a></div></section>
`, i, i, i, i%90, 12+i%5, i%10, i, i%50, i%30, i%70, i%50, i%51, i%30, i%31, i%70, i%71, i, i)
	}
	b.WriteString(`</article></main></div><footer><p>© Coast Report</p><a href="/privacy">Privacy</a></footer>
<script src="/app.js"></script></body></html>`)
	return b.Bytes()
}

// BenchmarkExtractLarge distils generated pages of 15 and 60 MB with links,
// tables and diagnostics asked for, reporting B/op, allocs/op and the
// process's peak resident memory (VmHWM). The peak is the process's over
// its whole life, so measure one size per run:
//
//	go test -run '^$' -bench 'ExtractLarge/15MB' -benchtime 1x -benchmem ./extract
func BenchmarkExtractLarge(b *testing.B) {
	for _, mb := range []int{15, 60} {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			page := largePage(mb << 20)
			ex := newExtractor()
			opts := &distillv1.FetchOptions{ExtractLinks: true, ExtractTables: true, Diagnostics: true}
			b.SetBytes(int64(len(page)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				req := &internalv1.ExtractRequest{Html: page, Url: pageURLForTests, Status: 200, ContentType: "text/html; charset=utf-8", Options: opts}
				if _, err := ex.Extract(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if hwm := peakRSS(); hwm > 0 {
				b.ReportMetric(float64(hwm)/(1<<20), "peak-RSS-MB")
				b.ReportMetric(float64(hwm)/float64(len(page)), "peak-RSS/page")
			}
		})
	}
}

// peakRSS is the process's peak resident set, from /proc/self/status, or
// 0 where there is no such file.
func peakRSS() int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
