package version

import (
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{"no build info", nil, false, "dev"},
		{"a module version", &debug.BuildInfo{Main: debug.Module{Version: "v0.3.1"}}, true, "v0.3.1"},
		{"a work tree's revision", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}}}, true, "0123456789ab"},
		{"neither", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "dev"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fromBuildInfo(tc.bi, tc.ok); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// The linker's stamp wins over the build info.
func TestStamp(t *testing.T) {
	old := stamp
	t.Cleanup(func() { stamp = old })
	stamp = "1.2.3"
	if got := String(); got != "1.2.3" {
		t.Fatalf("String = %q with a stamp", got)
	}
}

func TestInfo(t *testing.T) {
	built := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"},
		{Key: "vcs.time", Value: "2026-01-02T03:04:05Z"},
	}}
	t.Run("unstamped, from the build info", func(t *testing.T) {
		in := info(built, true)
		if in.Version != "0123456789ab" || in.Commit != "0123456789abcdef0123" || in.Date != "2026-01-02T03:04:05Z" {
			t.Fatalf("info = %+v", in)
		}
		if !strings.HasPrefix(in.Go, "go") {
			t.Fatalf("Go = %q", in.Go)
		}
	})
	t.Run("a modified work tree", func(t *testing.T) {
		dirty := *built
		dirty.Settings = append(slices.Clone(built.Settings), debug.BuildSetting{Key: "vcs.modified", Value: "true"})
		if in := info(&dirty, true); in.Commit != "0123456789abcdef0123+dirty" {
			t.Fatalf("Commit = %q", in.Commit)
		}
	})
	t.Run("nothing known", func(t *testing.T) {
		if in := info(nil, false); in.Version != "dev" || in.Commit != "unknown" || in.Date != "unknown" {
			t.Fatalf("info = %+v", in)
		}
	})
	t.Run("stamped", func(t *testing.T) {
		olds, oldc, oldd := stamp, commit, date
		t.Cleanup(func() { stamp, commit, date = olds, oldc, oldd })
		stamp, commit, date = "1.2.3", "feedface", "2026-12-01T00:00:00Z"
		if in := info(built, true); in.Version != "1.2.3" || in.Commit != "feedface" || in.Date != "2026-12-01T00:00:00Z" {
			t.Fatalf("the stamps lose to the build info: %+v", in)
		}
	})
}
