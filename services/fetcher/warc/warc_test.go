package warc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nlnwa/gowarc/v3"
)

// exchange is a GET of target answered 200 with body.
func exchange(t *testing.T, target, body string) Exchange {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	return Exchange{
		Date:     time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC),
		Request:  &http.Request{Method: http.MethodGet, URL: u, Header: http.Header{"User-Agent": {"distill/test"}}},
		Response: &http.Response{Status: "200 OK", StatusCode: 200, Proto: "HTTP/1.1", Header: http.Header{"Content-Type": {"text/html"}}},
		Body:     []byte(body),
		IP:       "127.0.0.1",
	}
}

type readRecord struct {
	typ, id, target, concurrent, info, truncated string
	block                                        []byte
	payload                                      []byte
	status                                       int
	header                                       http.Header
}

// readAll reads path back with gowarc under strict validation, which
// checks every record's Content-Length and its block and payload digests.
func readAll(t *testing.T, path string) []readRecord {
	t.Helper()
	r, err := gowarc.NewWarcFileReader(path, 0, gowarc.WithStrictValidation())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []readRecord
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("record %d: %v", len(out)+1, err)
		}
		h := rec.WarcRecord.WarcHeader()
		got := readRecord{
			typ: rec.WarcRecord.Type().String(), id: h.Get(gowarc.WarcRecordID), target: h.Get(gowarc.WarcTargetURI),
			concurrent: h.Get(gowarc.WarcConcurrentTo), info: h.Get(gowarc.WarcWarcinfoID), truncated: h.Get(gowarc.WarcTruncated),
		}
		for _, d := range []string{gowarc.WarcBlockDigest, gowarc.WarcPayloadDigest} {
			if got.typ != "warcinfo" && !strings.HasPrefix(h.Get(d), "sha1:") {
				t.Errorf("%s record of %s: %s = %q, want sha1:", got.typ, got.target, d, h.Get(d))
			}
		}
		raw, err := rec.WarcRecord.Block().RawBytes()
		if err != nil {
			t.Fatal(err)
		}
		if got.block, err = io.ReadAll(raw); err != nil {
			t.Fatal(err)
		}
		if pb, ok := rec.WarcRecord.Block().(gowarc.PayloadBlock); ok && got.typ != "warcinfo" {
			pr, err := pb.PayloadBytes()
			if err != nil {
				t.Fatal(err)
			}
			if got.payload, err = io.ReadAll(pr); err != nil {
				t.Fatal(err)
			}
		}
		if hb, ok := rec.WarcRecord.Block().(gowarc.HttpResponseBlock); ok {
			got.status = hb.HttpStatusCode()
			if h := hb.HttpHeader(); h != nil {
				got.header = h.Clone()
			}
		}
		out = append(out, got)
		_ = rec.Close()
	}
}

func TestRecordsReadBackWithTheirDigests(t *testing.T) {
	for _, name := range []string{"run.warc", "run.warc.gz"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			w, err := Open(path, Info{Software: "distill/test", Command: "distill fetch"})
			if err != nil {
				t.Fatal(err)
			}
			gz := exchange(t, "http://example.com/zipped?x=1", "<p>unzipped</p>")
			gz.Response.Header.Set("Content-Encoding", "gzip")
			gz.Response.TransferEncoding = []string{"chunked"}
			gz.Decoded = true
			cut := exchange(t, "http://example.com/long", "0123456789")
			cut.Response.Header.Set("Content-Length", "5000")
			cut.Truncated = TruncatedLength
			post := exchange(t, "http://example.com/form", "thanks")
			post.Request.Method = http.MethodPost
			post.Request.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			post.RequestBody = []byte("q=tide&n=2")
			for _, ex := range []Exchange{gz, cut, post} {
				w.Record(ex)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}

			recs := readAll(t, path)
			if len(recs) != 7 {
				t.Fatalf("read %d records, want a warcinfo and three pairs", len(recs))
			}
			info := recs[0]
			if info.typ != "warcinfo" || !bytes.Contains(info.block, []byte("decoded")) || !bytes.Contains(info.block, []byte("distill/test")) {
				t.Errorf("warcinfo = %s %q", info.typ, info.block)
			}
			for i, want := range []struct {
				target, body, truncated string
				header                  map[string]string
			}{
				{"http://example.com/zipped?x=1", "<p>unzipped</p>", "", map[string]string{
					"Content-Encoding": "", "X-Archive-Orig-Content-Encoding": "gzip",
					"Transfer-Encoding": "", "X-Archive-Orig-Transfer-Encoding": "chunked", "Content-Length": "15",
				}},
				{"http://example.com/long", "0123456789", TruncatedLength, map[string]string{
					"Content-Length": "10", "X-Archive-Orig-Content-Length": "5000",
				}},
				{"http://example.com/form", "thanks", "", nil},
			} {
				req, resp := recs[1+2*i], recs[2+2*i]
				if req.typ != "request" || resp.typ != "response" {
					t.Fatalf("pair %d is %s, %s", i, req.typ, resp.typ)
				}
				if req.target != want.target || resp.target != want.target {
					t.Errorf("pair %d targets %q and %q, want %q", i, req.target, resp.target, want.target)
				}
				if req.concurrent != resp.id || resp.concurrent != req.id {
					t.Errorf("pair %d is not linked: request %s -> %s, response %s -> %s", i, req.id, req.concurrent, resp.id, resp.concurrent)
				}
				if req.info != info.id || resp.info != info.id {
					t.Errorf("pair %d names warcinfo %s and %s, want %s", i, req.info, resp.info, info.id)
				}
				if string(resp.payload) != want.body || resp.status != 200 {
					t.Errorf("pair %d: response %d %q, want 200 %q", i, resp.status, resp.payload, want.body)
				}
				if resp.truncated != want.truncated {
					t.Errorf("pair %d: WARC-Truncated %q, want %q", i, resp.truncated, want.truncated)
				}
				for k, v := range want.header {
					if got := resp.header.Get(k); got != v {
						t.Errorf("pair %d: response header %s = %q, want %q", i, k, got, v)
					}
				}
			}
			postReq := recs[5]
			if !bytes.HasPrefix(postReq.block, []byte("POST /form HTTP/1.1\r\nHost: example.com\r\n")) || string(postReq.payload) != "q=tide&n=2" ||
				!bytes.Contains(postReq.block, []byte("Content-Length: 10\r\n")) {
				t.Errorf("POST request record:\n%s", postReq.block)
			}
		})
	}
}

// members splits a gzip file into its members' decompressed bytes.
func members(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	zr, err := gzip.NewReader(br)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for {
		zr.Multistream(false)
		b, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
		if err := zr.Reset(br); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
	}
}

func TestGzipKeepsEachRecordInAMemberOfItsOwn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.WARC.GZ")
	w, err := Open(path, Info{})
	if err != nil {
		t.Fatal(err)
	}
	w.Record(exchange(t, "http://example.com/a", "a"))
	w.Record(exchange(t, "http://example.com/b", "b"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ms := members(t, path)
	if len(ms) != 5 {
		t.Fatalf("%d gzip members, want 5 (warcinfo and two pairs)", len(ms))
	}
	for i, m := range ms {
		if !bytes.HasPrefix(m, []byte("WARC/1.1\r\n")) || !bytes.HasSuffix(m, []byte("\r\n\r\n")) || bytes.Count(m, []byte("WARC/1.1\r\n")) != 1 {
			t.Errorf("member %d is not one whole record:\n%q", i, m)
		}
	}
}

func TestAppendingAddsARunWithItsOwnWarcinfo(t *testing.T) {
	for _, name := range []string{"run.warc", "run.warc.gz"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			for _, page := range []string{"first", "second"} {
				w, err := Open(path, Info{Command: page})
				if err != nil {
					t.Fatal(err)
				}
				w.Record(exchange(t, "http://example.com/"+page, page))
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
			}
			recs := readAll(t, path)
			var types []string
			for _, r := range recs {
				types = append(types, r.typ+" "+r.target)
			}
			want := []string{"warcinfo ", "request http://example.com/first", "response http://example.com/first",
				"warcinfo ", "request http://example.com/second", "response http://example.com/second"}
			if fmt.Sprint(types) != fmt.Sprint(want) {
				t.Fatalf("records = %q, want %q", types, want)
			}
			if recs[4].info != recs[3].id || recs[1].info != recs[0].id || recs[0].id == recs[3].id {
				t.Errorf("each run's records must name its own warcinfo")
			}
		})
	}
}

// TestATornFileIsRefused cuts a whole file at every byte: only the cuts
// between two records may be appended to.
func TestATornFileIsRefused(t *testing.T) {
	for _, name := range []string{"run.warc", "run.warc.gz"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			w, err := Open(path, Info{})
			if err != nil {
				t.Fatal(err)
			}
			w.Record(exchange(t, "http://example.com/a", "a page"))
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			whole, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// Where records end: after each gzip member, or each record's
			// closing blank line.
			bounds := recordEnds(t, whole, strings.HasSuffix(name, ".gz"))
			if len(bounds) != 3 {
				t.Fatalf("found %d record ends, want 3", len(bounds))
			}
			cut := filepath.Join(dir, "cut-"+name)
			var accepted []int
			for n := 1; n < len(whole); n++ {
				if err := os.WriteFile(cut, whole[:n], 0o644); err != nil {
					t.Fatal(err)
				}
				w, err := Open(cut, Info{})
				if err == nil {
					accepted = append(accepted, n)
					if err := w.Close(); err != nil {
						t.Fatal(err)
					}
					continue
				}
				ce, ok := errors.AsType[*CorruptFileError](err)
				if !ok || !strings.Contains(err.Error(), "ends inside a record") {
					t.Fatalf("cut at %d: %v (%T), want a CorruptFileError saying it ends inside a record", n, err, ce)
				}
				// It says where the whole records end, so that they can be
				// kept.
				var ends int64
				for _, b := range bounds {
					if b < n {
						ends = int64(b)
					}
				}
				if ce.Whole != ends || (ends > 0 && !strings.Contains(err.Error(), fmt.Sprintf("truncate -s %d", ends))) {
					t.Fatalf("cut at %d: %v; want the whole records' end, %d", n, err, ends)
				}
				if got, _ := os.ReadFile(cut); !bytes.Equal(got, whole[:n]) {
					t.Fatalf("cut at %d: a refused file was changed", n)
				}
			}
			if fmt.Sprint(accepted) != fmt.Sprint(bounds[:2]) {
				t.Errorf("accepted cuts at %v, want exactly the record ends %v", accepted, bounds[:2])
			}
		})
	}
}

// recordEnds finds the offsets where records end in a file this package
// wrote, from the gzip members or the records' own lengths.
func recordEnds(t *testing.T, data []byte, gz bool) []int {
	t.Helper()
	var ends []int
	if gz {
		r := bytes.NewReader(data)
		for r.Len() > 0 {
			zr, err := gzip.NewReader(r)
			if err != nil {
				t.Fatal(err)
			}
			zr.Multistream(false)
			if _, err := io.Copy(io.Discard, zr); err != nil {
				t.Fatal(err)
			}
			ends = append(ends, len(data)-r.Len())
		}
		return ends
	}
	// A record's block never holds a blank line followed by a WARC
	// version line, so those mark where one record ends and the next
	// begins.
	sep := []byte("\r\n\r\nWARC/1.1\r\n")
	for i := 0; ; {
		j := bytes.Index(data[i:], sep)
		if j < 0 {
			return append(ends, len(data))
		}
		ends = append(ends, i+j+4)
		i += j + 4
	}
}

func TestOtherFilesAreRefused(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.warc")
	w, err := Open(plain, Info{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	whole, _ := os.ReadFile(plain)
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write(whole)
	zw.Close()
	for name, content := range map[string][]byte{
		"notes.warc":          []byte("just some notes\n"),
		"plain-named.warc.gz": whole,
		"zipped-named.warc":   zipped.Bytes(),
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, content, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Open(path, Info{})
			if _, ok := errors.AsType[*CorruptFileError](err); !ok {
				t.Fatalf("Open = %v, want a CorruptFileError", err)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, content) {
				t.Errorf("a refused file was changed")
			}
		})
	}
}

// TestManyGoroutinesWriteWholeRecords records from many goroutines at
// once: every record must come back whole, each request beside its
// response.
func TestManyGoroutinesWriteWholeRecords(t *testing.T) {
	for _, name := range []string{"run.warc", "run.warc.gz"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			w, err := Open(path, Info{})
			if err != nil {
				t.Fatal(err)
			}
			const writers, each = 12, 15
			var wg sync.WaitGroup
			for g := range writers {
				wg.Go(func() {
					for i := range each {
						// Bodies of different sizes, some past the
						// record builder's in-memory buffer.
						body := strings.Repeat(fmt.Sprintf("%d/%d ", g, i), 1+(g*each+i)%7*500)
						w.Record(exchange(t, fmt.Sprintf("http://example.com/%d/%d", g, i), body))
					}
				})
			}
			wg.Wait()
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			recs := readAll(t, path)
			if len(recs) != 1+2*writers*each {
				t.Fatalf("read %d records, want %d", len(recs), 1+2*writers*each)
			}
			seen := map[string]bool{}
			for i := 1; i < len(recs); i += 2 {
				req, resp := recs[i], recs[i+1]
				if req.typ != "request" || resp.typ != "response" || req.target != resp.target || req.concurrent != resp.id {
					t.Fatalf("records %d and %d are not one exchange: %s %s, %s %s", i, i+1, req.typ, req.target, resp.typ, resp.target)
				}
				var g, n int
				if _, err := fmt.Sscanf(resp.target, "http://example.com/%d/%d", &g, &n); err != nil {
					t.Fatal(err)
				}
				if want := strings.Repeat(fmt.Sprintf("%d/%d ", g, n), 1+(g*each+n)%7*500); string(resp.payload) != want {
					t.Fatalf("%s: body of %d bytes, want %d", resp.target, len(resp.payload), len(want))
				}
				seen[resp.target] = true
			}
			if len(seen) != writers*each {
				t.Errorf("%d distinct exchanges, want %d", len(seen), writers*each)
			}
		})
	}
}

func TestRecordsAfterCloseAreDropped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.warc")
	w, err := Open(path, Info{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w.Record(exchange(t, "http://example.com/late", "late"))
	if recs := readAll(t, path); len(recs) != 1 {
		t.Errorf("%d records, want only the warcinfo", len(recs))
	}
}

// BenchmarkRecord measures what keeping one exchange costs: building both
// records with their digests, gzipping them for .gz, and the write.
func BenchmarkRecord(b *testing.B) {
	for _, name := range []string{"run.warc", "run.warc.gz"} {
		for _, size := range []int{10 << 10, 1 << 20} {
			b.Run(fmt.Sprintf("%s/%dKiB", name, size>>10), func(b *testing.B) {
				w, err := Open(filepath.Join(b.TempDir(), name), Info{})
				if err != nil {
					b.Fatal(err)
				}
				defer w.Close()
				u, _ := url.Parse("http://example.com/page")
				ex := Exchange{
					Date:     time.Now(),
					Request:  &http.Request{Method: http.MethodGet, URL: u, Header: http.Header{"User-Agent": {"distill/bench"}}},
					Response: &http.Response{Status: "200 OK", StatusCode: 200, Proto: "HTTP/1.1", Header: http.Header{"Content-Type": {"text/html"}}},
					Body:     bytes.Repeat([]byte("<p>Anemones close when the water leaves.</p>\n"), size/46),
				}
				b.SetBytes(int64(len(ex.Body)))
				b.ReportAllocs()
				for b.Loop() {
					w.Record(ex)
				}
				if err := w.Err(); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}
