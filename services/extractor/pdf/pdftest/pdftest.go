// Package pdftest gives tests that read PDFs one place for the compiled
// PDF engine, shared by every test process of a run: compiling PDFium
// costs seconds of CPU, and a minute or more under the race detector.
package pdftest

import (
	"os"
	"path/filepath"

	"distill.dev/services/platform/envflag"
)

// CacheDir is the directory the tests keep the compiled engine in:
// DISTILL_PDF_CACHE_DIR when set (make test sets it, and compiles the
// engine there once before the tests start), else one under the system's
// temporary directory, shared by the test processes of one machine.
func CacheDir() string {
	if dir := os.Getenv(string(envflag.PDFCacheDir)); dir != "" {
		return dir
	}
	return filepath.Join(os.TempDir(), "distill-test-pdfium")
}
