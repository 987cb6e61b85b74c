package cli

import (
	"io"
	"testing"

	"github.com/spf13/pflag"

	"distill.dev/services/platform/envflag"
)

// The public surface frozen for 1.x: every `fetch` flag of the seed API with
// its default. Removing or renaming one, or changing a default, fails here;
// adding flags is fine. Defaults the seed leaves open ("—") are 0 or empty
// here, meaning "none".
var frozenFetchFlags = map[string]string{
	"format":               "markdown",
	"selector":             "",
	"profile":              "article",
	"stats":                "false",
	"diagnostics":          "false",
	"max-output-tokens":    "0",
	"timeout":              "20",
	"max-bytes":            "8388608",
	"no-cache":             "false",
	"cache-ttl":            "3600",
	"concurrency":          "8",
	"links":                "false",
	"links-all":            "false",
	"tables":               "false",
	"js":                   "auto",
	"js-wait":              "0",
	"js-wait-for":          "",
	"allow-local":          "false",
	"max-retries":          "2",
	"per-host-concurrency": "4",
	"rate-limit":           "0",
	"respect-robots":       "false",
	"actions":              "false",
	"max-actions":          "0",
}

func TestFetchFlagsFrozen(t *testing.T) {
	fetch, _, err := newRoot(envflag.FromOS(), io.Discard, io.Discard).Find([]string{"fetch"})
	if err != nil {
		t.Fatal(err)
	}
	for name, def := range frozenFetchFlags {
		f := fetch.Flags().Lookup(name)
		if f == nil {
			t.Errorf("fetch --%s is gone", name)
			continue
		}
		if f.DefValue != def {
			t.Errorf("fetch --%s defaults to %q, want %q", name, f.DefValue, def)
		}
		if f.Usage == "" {
			t.Errorf("fetch --%s has no help text", name)
		}
	}
}

func TestCacheActionsFrozen(t *testing.T) {
	root := newRoot(envflag.FromOS(), io.Discard, io.Discard)
	for _, action := range []string{"info", "prune", "clear"} {
		cmd, _, err := root.Find([]string{"cache", action})
		if err != nil || cmd.Name() != action {
			t.Errorf("cache %s is gone (%v)", action, err)
		}
	}
	prune, _, err := root.Find([]string{"cache", "prune"})
	if err != nil {
		t.Fatal(err)
	}
	if f := prune.Flags().Lookup("older-than"); f == nil || f.DefValue != "3600" {
		t.Errorf("cache prune --older-than = %v, want default 3600", f)
	}
}

func TestFetchFlagsMapToOptions(t *testing.T) {
	args := []string{"--js", "always", "--js-wait", "1500", "--js-wait-for", "#app .loaded", "--cache-ttl", "0", "--no-cache",
		"--respect-robots", "--max-retries", "0", "--per-host-concurrency", "0", "--actions", "--max-actions", "5", "--links-all"}
	f := &fetchFlags{}
	fs := pflag.NewFlagSet("fetch", pflag.ContinueOnError)
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	o := f.options(fs)
	switch {
	case o.GetJs().String() != "JS_MODE_ALWAYS", o.GetJsWait() != 1500, o.GetJsWaitFor() != "#app .loaded":
		t.Errorf("js options = %v %d %q", o.GetJs(), o.GetJsWait(), o.GetJsWaitFor())
	case o.CacheTtl == nil || o.GetCacheTtl() != 0, !o.GetNoCache(), !o.GetRespectRobots():
		t.Errorf("cache/robots options = %v %v %v", o.CacheTtl, o.GetNoCache(), o.GetRespectRobots())
	case o.MaxRetries == nil || o.GetMaxRetries() != 0, o.PerHostConcurrency == nil || o.GetPerHostConcurrency() != 0:
		t.Errorf("explicit zeros lost: retries %v, per-host %v", o.MaxRetries, o.PerHostConcurrency)
	case !o.GetExtractActions(), o.GetMaxActions() != 5, !o.GetLinksFull():
		t.Errorf("extraction options = %v %d %v", o.GetExtractActions(), o.GetMaxActions(), o.GetLinksFull())
	case o.TimeoutSecs != nil, o.MaxBytes != nil:
		t.Errorf("unchanged flags were set: timeout %v, max-bytes %v", o.TimeoutSecs, o.MaxBytes)
	}
}
