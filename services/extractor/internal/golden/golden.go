// Package golden compares test output with reviewed files under a
// package's testdata/golden, for the tests of the extractor's packages.
// Run a package's tests with -update to rewrite its golden files, then
// review the diff.
package golden

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// update is the -update flag of every test binary that compares goldens.
// Registering it here, rather than in each test package, keeps one flag
// with one meaning; only tests import this package.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// Check compares got with testdata/golden/name, rewriting the file under
// -update.
func Check(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if strings.TrimSuffix(string(want), "\n") != got {
		t.Errorf("%s differs from the golden file (run with -update after reviewing):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// ProtoJSON renders m as indented JSON with the proto field names, in a
// form stable enough for a golden file: protojson varies its whitespace.
func ProtoJSON(t testing.TB, m proto.Message) string {
	t.Helper()
	raw, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var compact, out bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		t.Fatal(err)
	}
	if err := json.Indent(&out, compact.Bytes(), "", "  "); err != nil {
		t.Fatal(err)
	}
	return out.String()
}
