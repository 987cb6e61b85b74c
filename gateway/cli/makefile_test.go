package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot is the checkout's top folder, where the Makefile is.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.work above the test's folder")
		}
		dir = parent
	}
}

// TestMakeRunPassesTheURLWhole runs `make run` with a stand-in for distill
// that prints its arguments, one a line: a URL full of what a shell or make
// would take apart must arrive as one argument, unchanged.
func TestMakeRunPassesTheURLWhole(t *testing.T) {
	bin := t.TempDir()
	stub := "#!/bin/sh\nprintf '%s\\n' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "distill"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, url := range []string{
		"http://127.0.0.1:8080/search?a=1&b=2",
		`http://127.0.0.1:8080/q?x=$HOME&y=$(id)&z=it's;"quoted" |more`,
		"http://127.0.0.1:8080/a b#frag",
	} {
		t.Run(url, func(t *testing.T) {
			// GOBUILD=true stands in for the build: what is tested is how
			// the recipe hands the URL over.
			cmd := exec.Command("make", "--no-print-directory", "-s", "run", "URL="+url, "ARGS=--allow-local --format json", "BIN="+bin, "GOBUILD=true")
			cmd.Dir = repoRoot(t)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("make run: %v\n%s", err, out)
			}
			want := "fetch\n--allow-local\n--format\njson\n" + url + "\n"
			if got := string(out); got != want {
				t.Fatalf("distill got the arguments\n%q\nwant\n%q", got, want)
			}
		})
	}
}

func TestMakeRunWithoutURLSaysHow(t *testing.T) {
	cmd := exec.Command("make", "--no-print-directory", "-s", "run", "BIN="+t.TempDir(), "GOBUILD=true")
	cmd.Dir = repoRoot(t)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "usage: make run URL=") {
		t.Fatalf("make run without URL: %v\n%s", err, out)
	}
}

// TestMakeInstallStampsTheBuild runs `make install` into a temporary GOBIN
// and asks the installed distill what it is: the Makefile's stamps must
// reach the binary (a -X naming a variable that does not exist is silently
// ignored by the linker).
func TestMakeInstallStampsTheBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds distill: make test runs it, make test-short does not")
	}
	gobin := t.TempDir()
	cmd := exec.Command("make", "--no-print-directory", "install", "VERSION=9.9.9-test", "COMMIT=c0ffee", "BUILD_DATE=2026-02-03T04:05:06Z")
	cmd.Dir = repoRoot(t)
	// PATH without GOBIN: make install must say how to put it there.
	cmd.Env = append(os.Environ(), "GOBIN="+gobin)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make install: %v\n%s%s", err, out, stderr.String())
	}
	installed := filepath.Join(gobin, "distill")
	if !strings.Contains(string(out), "installed "+installed) {
		t.Errorf("make install does not say where distill went: %s", out)
	}
	if !strings.Contains(stderr.String(), gobin+" is not on your PATH") {
		t.Errorf("make install does not say its folder is missing from PATH: %q", stderr.String())
	}
	got, err := exec.Command(installed, "--version").Output()
	if err != nil {
		t.Fatalf("distill --version: %v", err)
	}
	for _, want := range []string{"distill 9.9.9-test\n", "commit  c0ffee\n", "built   2026-02-03T04:05:06Z\n", "go      go"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("distill --version lacks %q:\n%s", want, got)
		}
	}
}
