package pdf

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klippa-app/go-pdfium/requests"
)

// BenchmarkRead reads each fixture and a 100-page document made of copies
// of the two-column page. Besides time and Go allocations it reports the
// guest's peak memory (a worker's linear memory only grows, so its size at
// the end of a read is its peak) and the process's peak RSS so far.
// Run one case per process for a per-case peak RSS:
//
//	go test ./pdf -run '^$' -bench 'Read/100-pages$' -benchmem
func BenchmarkRead(b *testing.B) {
	e := NewEngine(WithWorkers(1))
	b.Cleanup(func() { _ = e.Close() })
	cases := []struct {
		name string
		body []byte
	}{}
	for _, f := range []string{"two-column", "scan", "greek", "encrypted", "truncated"} {
		body, err := os.ReadFile(filepath.Join("testdata", f+".pdf"))
		if err != nil {
			b.Fatal(err)
		}
		cases = append(cases, struct {
			name string
			body []byte
		}{f, body})
	}
	cases = append(cases, struct {
		name string
		body []byte
	}{"100-pages", copies(b, e, cases[0].body, 100)})
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			var guest uint32
			cpu0 := cpuTime()
			for b.Loop() {
				doc, size, err := readMeasured(e, c.body)
				if err == nil && doc.Pages == 0 {
					b.Fatal("no pages")
				}
				guest = max(guest, size)
			}
			// The machine is shared: CPU time says more than wall time.
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
			b.ReportMetric(float64(guest)/(1<<20), "guest-peak-MiB")
			b.ReportMetric(peakRSS()/(1<<20), "rss-peak-MiB")
		})
	}
}

// readMeasured is Engine.Read that also returns the worker's memory size.
func readMeasured(e *Engine, body []byte) (*Document, uint32, error) {
	ctx := context.Background()
	inst, err := e.instance(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer inst.Close()
	doc, err := read(ctx, inst, body, MaxChars, e.memoryLimit)
	// go-pdfium keeps the guest module in an internal type; reflection
	// reaches its Memory().Size() without depending on that type.
	mod := reflect.ValueOf(inst.GetImplementation()).Elem().FieldByName("Module")
	mem := mod.MethodByName("Memory").Call(nil)[0]
	return doc, uint32(mem.MethodByName("Size").Call(nil)[0].Uint()), err
}

// copies returns a document of n copies of body's first page.
func copies(b *testing.B, e *Engine, body []byte, n int) []byte {
	inst, err := e.instance(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer inst.Close()
	src, err := inst.OpenDocument(&requests.OpenDocument{File: &body})
	if err != nil {
		b.Fatal(err)
	}
	dst, err := inst.FPDF_CreateNewDocument(&requests.FPDF_CreateNewDocument{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		one := "1"
		if _, err := inst.FPDF_ImportPages(&requests.FPDF_ImportPages{Source: src.Document, Destination: dst.Document, PageRange: &one, Index: i}); err != nil {
			b.Fatal(err)
		}
	}
	saved, err := inst.FPDF_SaveAsCopy(&requests.FPDF_SaveAsCopy{Document: dst.Document})
	if err != nil {
		b.Fatal(err)
	}
	return *saved.FileBytes
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS is the process's resident high-water mark, 0 where /proc has
// none.
func peakRSS() float64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for l := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb * 1024
		}
	}
	return 0
}
