package lint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"
)

func TestFuncLen(t *testing.T) {
	allowFile = filepath.Join(analysistest.TestData(), "long-functions.txt")
	t.Cleanup(func() { allowFile = "" })
	analysistest.Run(t, analysistest.TestData(), FuncLen, "long")
}

// A phase package holds every function to 60 lines, allowlisted or not;
// the others keep 80.
func TestFuncLenPhases(t *testing.T) {
	allowFile = filepath.Join(analysistest.TestData(), "long-functions.txt")
	phases = "phase,other"
	t.Cleanup(func() { allowFile, phases = "", "" })
	analysistest.Run(t, analysistest.TestData(), FuncLen, "phase", "long")
}

func TestMutableExport(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), MutableExport, "mutable")
}

// An allowlist entry must say why the function may be long.
func TestAllowlistEntryNeedsReason(t *testing.T) {
	path := filepath.Join(t.TempDir(), "allow.txt")
	if err := os.WriteFile(path, []byte("# comment\n\nexample.com/p.F\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := allowed(path)
	if err == nil || !strings.Contains(err.Error(), "allow.txt:3: example.com/p.F has no reason") {
		t.Fatalf("allowed() error = %v, want line 3 named as having no reason", err)
	}
}

// The repository's own allowlist parses, and every entry has a reason.
func TestRepositoryAllowlist(t *testing.T) {
	if _, err := allowed("long-functions.txt"); err != nil {
		t.Fatal(err)
	}
}
