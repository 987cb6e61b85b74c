package tokens

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

// BenchmarkCount times counting a typical page and the largest page the
// fetcher passes on, against the tokenizer package counting the same text.
//
//	go test -bench Count -benchmem ./services/extractor/tokens/
func BenchmarkCount(b *testing.B) {
	var pages []byte
	for _, name := range []string{"blog.html", "docs.html", "lazy.html"} {
		p, err := os.ReadFile("../extract/testdata/" + name)
		if err != nil {
			b.Fatal(err)
		}
		pages = append(pages, p...)
	}
	sizes := []struct {
		name string
		text string
	}{
		{"100KiB", repeatTo(string(pages), 100<<10)},
		{"8MiB", repeatTo(string(pages), 8<<20)},
		{"8MiB-one-letter", strings.Repeat("a", 8<<20)},
	}
	o200k()
	for _, size := range sizes {
		b.Run(size.name+"/distill", func(b *testing.B) {
			b.SetBytes(int64(len(size.text)))
			for b.Loop() {
				Count(size.text)
			}
		})
		if strings.HasSuffix(size.name, "one-letter") {
			continue // the tokenizer package needs ~160 MB for one piece
		}
		b.Run(size.name+"/tiktoken-go", func(b *testing.B) {
			b.SetBytes(int64(len(size.text)))
			for b.Loop() {
				referenceCodec().Count(size.text)
			}
		})
	}
}

// BenchmarkEncoderBuild times building the ranks from the codec's
// vocabulary and reports the heap the ranks keep.
func BenchmarkEncoderBuild(b *testing.B) {
	o200k() // the codec's own vocabulary is built once per process
	var kept float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		enc := buildEncoder()
		runtime.GC()
		runtime.ReadMemStats(&after)
		kept = float64(after.HeapAlloc-before.HeapAlloc) / (1 << 20)
		runtime.KeepAlive(enc)
	}
	b.ReportMetric(kept, "heap-MiB")
}

func repeatTo(s string, n int) string {
	return strings.Repeat(s, n/len(s)+1)[:n]
}
