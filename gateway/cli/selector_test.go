package cli

import (
	"strings"
	"testing"
)

// A selector that would burn the CPU is refused, naming the bound it
// breaks, before any request is made; so is one that does not parse.
func TestHostileSelectorIsRefusedBeforeFetching(t *testing.T) {
	srv, hits := counted(t)
	tests := []struct {
		name string
		sel  string
		want string
	}{
		{name: "nested :has()", sel: ":has(:has(:has(:has(*))))", want: ":has() 4 deep, over the limit of 1"},
		{name: "too long", sel: strings.Repeat("div ", 300), want: "over the limit of 1024"},
		{name: "not a selector", sel: "p[", want: `invalid selector "p["`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := run(t, "fetch", "--allow-local", "--no-cache", "--selector", tt.sel, srv.URL, srv.URL+"/2")
			first, _, _ := strings.Cut(errOut, "\n")
			if code != ExitUsage || !strings.Contains(first, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and a first line naming %q", code, errOut, ExitUsage, tt.want)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the server got %d requests, want none", n)
	}
	if _, errOut, code := run(t, "extract", "--selector", ":has(:has(p))", "-"); code != ExitUsage || !strings.Contains(errOut, ":has()") {
		t.Errorf("extract: exit %d, stderr %q; want a usage error naming :has()", code, errOut)
	}
}
