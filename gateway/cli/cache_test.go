package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"distill.dev/services/platform/envflag"
)

// packageCacheDir is the cache TestMain points the package at.
var packageCacheDir string

// TestMain keeps every test of the package, fetch tests included, off the
// user's cache: a page cached by an earlier run on a reused port would
// otherwise answer for a test's server. Runs through testEnv get a cache
// per test on top of that.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "distill-cli-cache-")
	if err != nil {
		panic(err)
	}
	packageCacheDir = dir
	os.Setenv(string(envflag.CacheDir), dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// counted serves one page and counts the requests for it.
func counted(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Set-Cookie", "session=secret-cookie-value")
		w.Write([]byte("<html><head><title>Counted</title></head><body><main><h1>Counted</h1><p>A page that knows how often it was asked for.</p></main></body></html>"))
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func wantRun(t *testing.T, wantCode int, args ...string) string {
	t.Helper()
	out, errOut, code := run(t, args...)
	if code != wantCode {
		t.Fatalf("distill %s: exit %d, want %d; stderr %q", strings.Join(args, " "), code, wantCode, errOut)
	}
	return out
}

func TestFetchUsesTheCache(t *testing.T) {
	t.Setenv(string(envflag.CacheDir), t.TempDir())
	srv, hits := counted(t)
	fetch := func(flags ...string) {
		t.Helper()
		out := wantRun(t, ExitOK, append(append([]string{"fetch", "--allow-local"}, flags...), srv.URL)...)
		if !strings.Contains(out, "# Counted") {
			t.Fatalf("output %q", out)
		}
	}
	wantHits := func(n int32) {
		t.Helper()
		if got := hits.Load(); got != n {
			t.Fatalf("server got %d requests, want %d", got, n)
		}
	}

	fetch()
	fetch()
	wantHits(1)
	fetch("--no-cache")
	wantHits(2)
	fetch("--cache-ttl", "0")
	wantHits(3)
	fetch("--cache-ttl", "60")
	wantHits(3)

	if out := wantRun(t, ExitOK, "cache", "info"); !strings.Contains(out, "entries: 1\n") || !strings.Contains(out, os.Getenv(string(envflag.CacheDir))) {
		t.Errorf("cache info = %q, want 1 entry in %s", out, os.Getenv(string(envflag.CacheDir)))
	}
	// Headers are never stored, cookies least of all.
	err := filepath.WalkDir(os.Getenv(string(envflag.CacheDir)), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if strings.Contains(string(b), "secret-cookie-value") {
			t.Errorf("%s holds the Set-Cookie value", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCacheCommands(t *testing.T) {
	srv, _ := counted(t)
	dir := t.TempDir()
	// The flag wins over the environment.
	t.Setenv(string(envflag.CacheDir), filepath.Join(t.TempDir(), "unused"))
	wantRun(t, ExitOK, "--cache-dir", dir, "fetch", "--allow-local", srv.URL+"/one")
	wantRun(t, ExitOK, "--cache-dir", dir, "fetch", "--allow-local", srv.URL+"/two")

	out := wantRun(t, ExitOK, "cache", "info", "--cache-dir", dir)
	if !strings.Contains(out, "entries: 2\n") || !strings.Contains(out, "dir:     "+dir+"\n") || strings.Contains(out, "bytes:   0\n") {
		t.Errorf("cache info = %q", out)
	}
	if out := wantRun(t, ExitOK, "cache", "prune", "--cache-dir", dir); out != "removed 0 entries, freed 0 bytes\n" {
		t.Errorf("prune of young entries = %q", out)
	}
	if out := wantRun(t, ExitOK, "cache", "prune", "--older-than", "0", "--cache-dir", dir); !strings.HasPrefix(out, "removed 2 entries, freed ") {
		t.Errorf("prune --older-than 0 = %q", out)
	}
	wantRun(t, ExitOK, "--cache-dir", dir, "fetch", "--allow-local", srv.URL+"/three")
	if out := wantRun(t, ExitOK, "cache", "clear", "--cache-dir", dir); !strings.HasPrefix(out, "removed 1 entries, freed ") {
		t.Errorf("clear = %q", out)
	}
	if out := wantRun(t, ExitOK, "cache", "info", "--cache-dir", dir); !strings.Contains(out, "entries: 0\nbytes:   0\n") {
		t.Errorf("cache info after clear = %q", out)
	}
	if _, err := os.Stat(filepath.Join(os.Getenv(string(envflag.CacheDir)))); !os.IsNotExist(err) {
		t.Error("the environment's directory was used despite --cache-dir")
	}
}

func TestCacheCommandsFailOnAnUnusableDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(string(envflag.CacheDir), filepath.Join(file, "cache"))
	for _, action := range []string{"info", "prune", "clear"} {
		t.Run(action, func(t *testing.T) {
			out, errOut, code := run(t, "cache", action)
			if code != ExitFailure {
				t.Errorf("exit %d, want %d", code, ExitFailure)
			}
			if out != "" {
				t.Errorf("stdout = %q", out)
			}
			if !strings.HasPrefix(errOut, "distill: cache "+action+": ") || !strings.Contains(errOut, "not a directory") || strings.Count(errOut, "\n") != 1 {
				t.Errorf("stderr = %q, want one line saying why", errOut)
			}
		})
	}

	t.Run("fetch still works", func(t *testing.T) {
		srv, hits := counted(t)
		wantRun(t, ExitOK, "fetch", "--allow-local", srv.URL)
		wantRun(t, ExitOK, "fetch", "--allow-local", srv.URL)
		if n := hits.Load(); n != 2 {
			t.Errorf("server got %d requests, want 2", n)
		}
	})
}

func TestCacheUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no action", []string{"cache"}, "cache needs an action"},
		{"unknown action", []string{"cache", "empty"}, `unknown command "empty"`},
		{"negative age", []string{"cache", "prune", "--older-than", "-1"}, "--older-than must not be negative"},
		{"negative ttl", []string{"fetch", "--cache-ttl", "-5", "http://x/"}, "--cache-ttl must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := run(t, tt.args...)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d", code, ExitUsage)
			}
			if !strings.Contains(errOut, tt.want) {
				t.Errorf("stderr = %q, want it to mention %q", errOut, tt.want)
			}
		})
	}
}
