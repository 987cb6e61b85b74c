package warc

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestExchangesOfAnyShapeAreKept records what real servers send besides
// HTTP/1.1 with a reason phrase: every record must read back whole under
// strict validation.
func TestExchangesOfAnyShapeAreKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shapes.warc")
	w, err := Open(path, Info{})
	if err != nil {
		t.Fatal(err)
	}
	h2 := exchange(t, "https://example.com/h2", "two")
	h2.Response.Proto = "HTTP/2.0"
	h2.IP = "::1"
	bare := exchange(t, "http://example.com/bare", "bare")
	bare.Response.Status, bare.Response.StatusCode = "", 299
	empty := exchange(t, "http://example.com/empty", "")
	empty.Response.Status, empty.Response.StatusCode = "204 No Content", 204
	for _, ex := range []Exchange{h2, bare, empty} {
		w.Record(ex)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range readAll(t, path) {
		if r.typ == "response" {
			got = append(got, fmt.Sprintf("%s %d %q", r.target, r.status, r.payload))
		}
	}
	want := []string{`https://example.com/h2 200 "two"`, `http://example.com/bare 299 "bare"`, `http://example.com/empty 204 ""`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("responses read back: %q, want %q", got, want)
	}
}
