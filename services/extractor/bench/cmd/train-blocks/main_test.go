package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"distill.dev/services/extractor/readable"
)

func testConfig() readable.TrainConfig {
	return readable.TrainConfig{Bits: 12, Epochs: 2, Alpha: 0.1, Beta: 1, L1: 0.1, L2: 0.1, Seed: 1}
}

func TestTrainWritesAModelTheExtractorLoads(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "blockmodel.bin")
	var report bytes.Buffer
	err := run(context.Background(), options{
		corpus: "../../harness/testdata/wcxb/dev", out: out, folds: 2, extract: true, cfg: testConfig(),
	}, &report)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"3 pages", "2 folds by host", "thresholds by page type", "labels", "out of fold", "wrote " + out} {
		if !strings.Contains(report.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, report.String())
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var m readable.BlockModel
	if err := m.UnmarshalBinary(data); err != nil {
		t.Fatalf("written model does not load: %v", err)
	}
	if m.Threshold < 0 || m.Threshold >= 1 {
		t.Errorf("threshold %v, want one from the grid", m.Threshold)
	}

	// The same corpus and config write the same model.
	again := filepath.Join(t.TempDir(), "again.bin")
	if err := run(context.Background(), options{
		corpus: "../../harness/testdata/wcxb/dev", out: again, folds: 2, cfg: testConfig(),
	}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if second, _ := os.ReadFile(again); !bytes.Equal(data, second) {
		t.Error("training twice on the same pages wrote two different models")
	}
}

func TestTrainRefusesBadInput(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		o    options
		want string
	}{
		"one fold":   {options{corpus: "../../harness/testdata/wcxb/dev", folds: 1, cfg: testConfig()}, "-folds 1"},
		"hash width": {options{corpus: "../../harness/testdata/wcxb/dev", folds: 2, cfg: readable.TrainConfig{Bits: 30}}, "-bits 30"},
		"no corpus":  {options{corpus: t.TempDir(), folds: 2, cfg: testConfig()}, "not a corpus"},
	}
	for name, tc := range tests {
		err := run(context.Background(), tc.o, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one naming %q", name, err, tc.want)
		}
	}
}
