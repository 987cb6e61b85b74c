package extract

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/tokens"
)

// hostileBudget is the output budget hostile pages run under.
const hostileBudget = 5000

// everything asks for every part of the result, so hostile input goes
// through every code path.
func everything(profile distillv1.Profile) *distillv1.FetchOptions {
	return &distillv1.FetchOptions{
		Profile:         profile,
		Format:          distillv1.Format_FORMAT_TEXT,
		Stats:           true,
		Diagnostics:     true,
		ExtractLinks:    true,
		LinksFull:       true,
		ExtractTables:   true,
		ExtractActions:  true,
		MaxOutputTokens: proto.Int64(hostileBudget),
	}
}

// hostileProfiles are the ways content is chosen: the three profiles and
// a selector.
var hostileProfiles = []struct {
	name     string
	opts     func() *distillv1.FetchOptions
	wantText bool // the page's marker text is in the output
}{
	{"article", func() *distillv1.FetchOptions { return everything(distillv1.Profile_PROFILE_ARTICLE) }, true},
	{"full", func() *distillv1.FetchOptions { return everything(distillv1.Profile_PROFILE_FULL) }, true},
	{"metadata", func() *distillv1.FetchOptions { return everything(distillv1.Profile_PROFILE_METADATA) }, false},
	{"selector", func() *distillv1.FetchOptions {
		o := everything(distillv1.Profile_PROFILE_UNSPECIFIED)
		o.Selector = "article, div, p"
		return o
	}, true},
}

// hostilePage is a page built to be expensive: the figures quoted for
// hostile input come from these.
type hostilePage struct {
	name string
	page []byte
	want string // text the output keeps, at its start
}

// hostilePages builds the big three once: an 8 MiB article, elements
// nested 100,000 deep and an element with a million attributes.
var hostilePages = sync.OnceValue(func() []hostilePage {
	var big strings.Builder
	big.WriteString("<html><head><title>Eight mebibytes</title></head><body><nav><a href=\"/\">Home</a></nav><article><h1>Eight mebibytes</h1>")
	for i := 0; big.Len() < 8<<20-4096; i++ {
		switch i % 20 {
		case 7:
			fmt.Fprintf(&big, "<table><tr><th>Year</th><th>Value</th></tr><tr><td>%d</td><td>%d.5</td></tr></table>", 1900+i%120, i)
		case 13:
			fmt.Fprintf(&big, "<pre><code class=\"language-go\">for i := range %d {\n\tfmt.Println(i)\n}\n</code></pre>", i)
		case 17:
			fmt.Fprintf(&big, "<form action=\"/search\"><input name=\"q%d\"><button>Search</button></form>", i)
		default:
			fmt.Fprintf(&big, "<p>Paragraph %d of a very long article, with <a href=\"/p/%d\">a link</a>, some <b>bold</b> words and enough prose to look like a page that somebody wrote by hand.</p>", i, i)
		}
	}
	big.WriteString("</article></body></html>")

	const depth = 100_000
	nested := strings.Repeat("<div>", depth) + "<p>deep text survives</p>" + strings.Repeat("</div>", depth)

	var attrs strings.Builder
	attrs.WriteString("<html><body><div ")
	for i := range 1_000_000 {
		attrs.WriteString(strconv.FormatInt(int64(i), 36))
		attrs.WriteString("=1 ")
	}
	attrs.WriteString("><p>text after a million attributes</p></div></body></html>")

	return []hostilePage{
		{name: "8MiB-article", page: []byte(big.String()), want: "# Eight mebibytes"},
		{name: "nested-100k", page: []byte(nested), want: "deep text survives"},
		{name: "attributes-1M", page: []byte(attrs.String()), want: "text after a million attributes"},
	}
})

func TestHostilePages(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("hostile pages take seconds")
	}
	pages := hostilePages()
	if n := len(pages[0].page); n < 8<<20-4096 || n > 8<<20 {
		t.Fatalf("big page is %d bytes", n)
	}
	e := newExtractor()
	for _, p := range pages {
		for _, profile := range hostileProfiles {
			t.Run(p.name+"/"+profile.name, func(t *testing.T) {
				if raceDetector && len(p.page) > 1<<20 {
					t.Skip("megabytes of page take minutes under the race detector")
				}
				// Each takes seconds; side by side they fit the package's
				// test time, at the cost of one more extraction's memory
				// per CPU.
				t.Parallel()
				resp, err := e.Extract(context.Background(), &internalv1.ExtractRequest{
					Html: p.page, Url: pageURLForTests, Status: 200, Options: profile.opts(),
				})
				if err != nil {
					t.Fatalf("Extract: %v", err)
				}
				d := resp.GetDistilled()
				if profile.wantText && !strings.Contains(d.GetMarkdown(), p.want) {
					t.Errorf("markdown lacks %q: %.300q", p.want, d.GetMarkdown())
				}
				for _, out := range []string{d.GetMarkdown(), d.GetText()} {
					if n := tokens.Count(out); n > hostileBudget {
						t.Errorf("%d tokens, over the budget", n)
					}
				}
				if s := d.GetStats(); s.GetRawBytes() != int64(len(p.page)) || s.GetRawTokens() == 0 {
					t.Errorf("stats = %v", s)
				}
			})
		}
	}
}

// BenchmarkHostile reports, for each hostile page and profile, the time
// and allocation of one extraction with every option on, and the peak of
// the live heap during it (sampled every millisecond).
//
//	go test -run XXX -bench Hostile -benchmem ./services/extractor/extract/
func BenchmarkHostile(b *testing.B) {
	e := newExtractor()
	tokens.Count("") // build the vocabulary outside the figures
	for _, p := range hostilePages() {
		for _, profile := range hostileProfiles {
			b.Run(p.name+"/"+profile.name, func(b *testing.B) {
				req := &internalv1.ExtractRequest{Html: p.page, Url: pageURLForTests, Status: 200, Options: profile.opts()}
				b.SetBytes(int64(len(p.page)))
				var peak uint64
				for b.Loop() {
					peak = max(peak, peakHeap(func() {
						if _, err := e.Extract(context.Background(), req); err != nil {
							b.Fatal(err)
						}
					}))
				}
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			})
		}
	}
}

// peakHeap runs fn and returns the most heap memory in objects, live or
// not yet swept, seen while it ran, above what was there before.
func peakHeap(fn func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	base := read()
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if v := read(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	fn()
	close(done)
	wg.Wait()
	if v := read(); v > peak.Load() {
		peak.Store(v)
	}
	return peak.Load() - min(base, peak.Load())
}

// TestHostileInput runs smaller hostile shapes; TestHostilePages has the
// megabyte ones, a million attributes among them.
func TestHostileInput(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("hostile pages take seconds")
	}
	const depth = 1_000_000
	nested := strings.Repeat("<div>", depth) + "deep text survives" + strings.Repeat("</div>", depth)

	var cells strings.Builder
	cells.WriteString("<table>")
	for range 2000 {
		cells.WriteString(`<tr><td colspan="1000000">x</td><td colspan="-5">y</td></tr>`)
	}
	cells.WriteString("</table>")

	tests := []struct {
		name string
		page string
		want string // text the result keeps
	}{
		{name: "a million nested divs", page: nested, want: "deep text survives"},
		{name: "nested inline and block", page: strings.Repeat("<span><div><b>", 100_000) + "inner words" + strings.Repeat("</b></div></span>", 100_000), want: "inner words"},
		{name: "self-closing divs", page: strings.Repeat("<div/>", 300_000) + "after self-closing", want: "after self-closing"},
		{name: "nested tables", page: strings.Repeat("<table><tr><td>", 50_000) + "cell text", want: "cell text"},
		{name: "huge colspans", page: cells.String()},
		{name: "unclosed formatting", page: strings.Repeat(`<b id="x"><i><a href="/a">`, 50_000) + "formatted", want: "formatted"},
		{name: "binary garbage as html", page: string([]byte{0x00, 0xff, 0xfe, '<', 0x80, '>', 0x1b})},
	}
	profiles := []distillv1.Profile{distillv1.Profile_PROFILE_ARTICLE, distillv1.Profile_PROFILE_FULL, distillv1.Profile_PROFILE_METADATA}
	for _, tt := range tests {
		for _, profile := range profiles {
			t.Run(tt.name+"/"+profile.String(), func(t *testing.T) {
				t.Parallel()
				d := run(t, htmlReq(tt.page, everything(profile)))
				if tt.want != "" && profile != distillv1.Profile_PROFILE_METADATA && !strings.Contains(d.GetMarkdown(), tt.want) {
					t.Errorf("markdown lacks %q: %.200q", tt.want, d.GetMarkdown())
				}
			})
		}
	}
}
