package cli

import (
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"distill.dev/services/platform/envflag"
)

var flagLine = regexp.MustCompile(`^\s+(?:-\w, )?--([a-z-]+)\b`)

// fetch --help lists its flags in sections, each flag once, and no flag
// of fetch's own is left out of them.
func TestFetchHelpGroupsItsFlags(t *testing.T) {
	out, errOut, code := run(t, "fetch", "--help")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	headings := []string{"Output flags:", "Content flags:", "Network flags:", "Rendering flags:", "Batch flags:", "Cache flags:", "Global flags:"}
	at := -1
	for _, h := range headings {
		i := strings.Index(out, "\n"+h+"\n")
		if i <= at {
			t.Fatalf("%q missing or out of order:\n%s", h, out)
		}
		at = i
	}
	// Each flag's lines under a heading: the section it is listed in.
	listed := map[string][]string{}
	heading := ""
	for line := range strings.Lines(out) {
		line = strings.TrimRight(line, "\n")
		if slices.Contains(headings, line) {
			heading = line
			continue
		}
		if m := flagLine.FindStringSubmatch(line); m != nil && heading != "" {
			listed[m[1]] = append(listed[m[1]], heading)
		}
	}
	for flag, want := range map[string]string{"format": "Output flags:", "selector": "Content flags:", "allow-local": "Network flags:", "js-wait-for": "Rendering flags:", "input": "Batch flags:", "no-cache": "Cache flags:", "log-level": "Global flags:"} {
		if got := listed[flag]; !slices.Equal(got, []string{want}) {
			t.Errorf("--%s is under %q, want %q", flag, got, want)
		}
	}

	fetch, _, err := newRoot(envflag.FromOS(), io.Discard, io.Discard).Find([]string{"fetch"})
	if err != nil {
		t.Fatal(err)
	}
	fetch.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if f.Name == "help" {
			return
		}
		if len(f.Annotations[groupAnnotation]) == 0 {
			t.Errorf("--%s is in no help section", f.Name)
		}
		if got := listed[f.Name]; len(got) != 1 {
			t.Errorf("--%s is listed under %q, want one section", f.Name, got)
		}
	})
}
