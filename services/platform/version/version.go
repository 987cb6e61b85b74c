// Package version is distill's version, one for every binary: the User-Agent
// of its requests, `distill version`, the MCP server's name and the
// telemetry resource all say it. The Makefile and the Dockerfiles stamp it,
// with the commit and the build time, through the linker:
//
//	go build -ldflags "-X distill.dev/services/platform/version.stamp=0.1.0
//	    -X distill.dev/services/platform/version.commit=$(git rev-parse HEAD)
//	    -X distill.dev/services/platform/version.date=2026-01-02T03:04:05Z" ...
//
// A binary built another way (go build, go install) reports what its build
// info holds: the module version or VCS revision, the commit's time, or
// "dev" and "unknown".
package version

import (
	"runtime"
	"runtime/debug"
)

// Set by the linker.
var stamp, commit, date string

// unknown stands for a commit or date nothing recorded.
const unknown = "unknown"

// String returns the version.
func String() string {
	if stamp != "" {
		return stamp
	}
	return fromBuildInfo(debug.ReadBuildInfo())
}

// Info is everything a binary knows about its build.
type Info struct {
	// Version is String().
	Version string
	// Commit is the VCS revision the binary was built from.
	Commit string
	// Date is when it was built (RFC 3339), or, unstamped, the time of
	// its commit.
	Date string
	// Go is the Go release that compiled it, with the platform.
	Go string
}

// Get returns the binary's build information.
func Get() Info {
	bi, ok := debug.ReadBuildInfo()
	return info(bi, ok)
}

func info(bi *debug.BuildInfo, ok bool) Info {
	in := Info{
		Version: stamp,
		Commit:  commit,
		Date:    date,
		Go:      runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH,
	}
	if in.Version == "" {
		in.Version = fromBuildInfo(bi, ok)
	}
	if in.Commit == "" {
		in.Commit = setting(bi, ok, "vcs.revision")
		// A build from a work tree with uncommitted changes is not that
		// commit; say so.
		if in.Commit != unknown && setting(bi, ok, "vcs.modified") == "true" {
			in.Commit += "+dirty"
		}
	}
	if in.Date == "" {
		in.Date = setting(bi, ok, "vcs.time")
	}
	return in
}

func setting(bi *debug.BuildInfo, ok bool, key string) string {
	if ok {
		for _, s := range bi.Settings {
			if s.Key == key && s.Value != "" {
				return s.Value
			}
		}
	}
	return unknown
}

func fromBuildInfo(bi *debug.BuildInfo, ok bool) string {
	if !ok {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	if rev := setting(bi, ok, "vcs.revision"); rev != unknown {
		return rev[:min(len(rev), 12)]
	}
	return "dev"
}
