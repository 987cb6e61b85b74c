package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTrainWritesTheModelAsGo(t *testing.T) {
	articleOdds = 1.5
	out := filepath.Join(t.TempDir(), "pagetype_model.go")
	var report bytes.Buffer
	err := run(options{corpus: "../../harness/testdata/wcxb/dev", out: out, folds: 2, iters: 50, l2: 0.01, seed: 1}, &report, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(src), "// Code generated") || !strings.Contains(string(src), "package readable") {
		t.Errorf("written model is not the readable package's generated source:\n%.300s", src)
	}
	if report.Len() == 0 {
		t.Error("no cross-validation report")
	}
	if err := run(options{corpus: t.TempDir(), folds: 2}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "not a corpus") {
		t.Errorf("no corpus: err = %v", err)
	}
	if err := run(options{corpus: "../../harness/testdata/wcxb/dev", folds: 1}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "-folds 1") {
		t.Errorf("one fold: err = %v", err)
	}
}
