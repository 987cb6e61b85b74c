package version

import (
	"runtime/debug"
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
