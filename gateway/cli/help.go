package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// groupAnnotation is the flag annotation naming the help section a flag is
// listed in.
const groupAnnotation = "distill_group"

// fetchGroups are fetch's help sections, in order, with their flags.
var fetchGroups = []struct {
	name  string
	flags []string
}{
	{"Output", []string{"format", "stats", "diagnostics", "max-output-tokens", "fail-on-http-error", "warc", "citations", "chunk", "chunk-overlap"}},
	{"Content", []string{"selector", "profile", "links", "links-all", "tables", "actions", "max-actions", "query", "diff-with", "brand"}},
	{"Page parts", pagePartFlagNames},
	{"Picking", []string{"select", "xpath", "field", "find-text", "find-regex", "exact", "case-sensitive", "similar", "max-matches"}},
	{"Network", []string{"timeout", "max-bytes", "allow-local", "max-retries", "per-host-concurrency", "rate-limit", "respect-robots", "browser", "server"}},
	{"Rendering", []string{"js", "js-wait", "js-wait-for", "steps", "scroll", "screenshot", "screenshot-format", "pdf", "mhtml", "output", "capture-network", "capture-types", "capture-credentials", "block"}},
	{"Batch", []string{"concurrency", "input", "output-dir"}},
	{"Crawl", crawlFlagNames},
	{"Cache", []string{"no-cache", "cache-ttl"}},
}

// groupFetchFlags files each of fetch's flags under its help section.
func groupFetchFlags(fs *pflag.FlagSet) {
	for _, g := range fetchGroups {
		for _, name := range g.flags {
			if f := fs.Lookup(name); f != nil {
				if f.Annotations == nil {
					f.Annotations = map[string][]string{}
				}
				f.Annotations[groupAnnotation] = []string{g.name}
			}
		}
	}
}

// groupedUsage is cobra's usage text with the command's flags listed by
// section, so that thirty flags read as six short lists; flags of no
// section (--help) come last.
func groupedUsage(c *cobra.Command) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage:\n  %s\n", c.UseLine())
	if c.HasExample() {
		fmt.Fprintf(&b, "\nExamples:\n%s\n", c.Example)
	}
	sections := map[string]*pflag.FlagSet{}
	other := pflag.NewFlagSet("other", pflag.ContinueOnError)
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		g := f.Annotations[groupAnnotation]
		if len(g) == 0 {
			other.AddFlag(f)
			return
		}
		if sections[g[0]] == nil {
			sections[g[0]] = pflag.NewFlagSet(g[0], pflag.ContinueOnError)
			sections[g[0]].SortFlags = false
		}
		sections[g[0]].AddFlag(f)
	})
	for _, g := range fetchGroups {
		if fs := sections[g.name]; fs != nil {
			fmt.Fprintf(&b, "\n%s flags:\n%s", g.name, fs.FlagUsages())
		}
	}
	if other.HasFlags() {
		fmt.Fprintf(&b, "\nOther flags:\n%s", other.FlagUsages())
	}
	if c.HasAvailableInheritedFlags() {
		fmt.Fprintf(&b, "\nGlobal flags:\n%s", c.InheritedFlags().FlagUsages())
	}
	_, err := fmt.Fprint(c.OutOrStderr(), b.String())
	return err
}
