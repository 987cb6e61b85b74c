// Package version is distill's version, one for every binary: the User-Agent
// of its requests, `distill version`, the MCP server's name and the
// telemetry resource all say it. The Makefile and the Dockerfiles set it:
//
//	go build -ldflags "-X distill.dev/services/platform/version.stamp=0.1.0" ...
//
// A binary built another way reports its module version or VCS revision
// from the build info, or "dev".
package version

import "runtime/debug"

// stamp is set by the linker.
var stamp string

// String returns the version.
func String() string {
	if stamp != "" {
		return stamp
	}
	return fromBuildInfo(debug.ReadBuildInfo())
}

func fromBuildInfo(bi *debug.BuildInfo, ok bool) string {
	if !ok {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && s.Value != "" {
			return s.Value[:min(len(s.Value), 12)]
		}
	}
	return "dev"
}
