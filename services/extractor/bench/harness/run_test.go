package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"distill.dev/services/extractor/bench/metric"
)

// The tests of Run are not parallel: Run holds the process to one core
// while it measures.

func run(t *testing.T, cfg Config) (string, error) {
	t.Helper()
	cfg.OutDir = t.TempDir()
	cfg.Rounds = 1
	var out bytes.Buffer
	err := Run(context.Background(), cfg, slog.New(slog.DiscardHandler), &out)
	return out.String(), err
}

// section returns the rows of the table under the line title, each split
// into fields, header first.
func section(t *testing.T, out, title string) [][]string {
	t.Helper()
	_, rest, ok := strings.Cut(out, "\n"+title+"\n")
	if !ok {
		t.Fatalf("no %q in\n%s", title, out)
	}
	var rows [][]string
	for _, line := range strings.Split(rest, "\n") {
		if strings.TrimSpace(line) == "" {
			break
		}
		rows = append(rows, strings.Fields(line))
	}
	return rows
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestRunWCXB(t *testing.T) {
	outDir := t.TempDir()
	var buf bytes.Buffer
	cfg := Config{Corpus: wcxbFixture, OutDir: outDir, Rounds: 1, Worst: 1}
	if err := Run(context.Background(), cfg, slog.New(slog.DiscardHandler), &buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	corpus, err := LoadCorpus(wcxbFixture)
	if err != nil {
		t.Fatal(err)
	}

	rows := section(t, out, "word F1 by page type")
	if got, want := strings.Join(rows[0], " "), "type pages distill go-trafilatura go-readability"; got != want {
		t.Fatalf("header %q, want %q", got, want)
	}
	var types []string
	for _, r := range rows[1:] {
		types = append(types, r[0]+":"+r[1])
	}
	if got, want := strings.Join(types, " "), "article:2 forum:1 all:3"; got != want {
		t.Errorf("type rows %s, want %s", got, want)
	}

	// Each figure of the table is the benchmark's metric on the
	// predictions written out.
	for col, name := range rows[0][2:] {
		var preds map[string]string
		readJSON(t, filepath.Join(outDir, name+".json"), &preds)
		if len(preds) != 3 {
			t.Errorf("%s: %d predictions, want 3", name, len(preds))
		}
		var records []pageRecord
		readJSON(t, filepath.Join(outDir, name+".pages.json"), &records)
		for _, row := range rows[1:] {
			var ps []metric.WordPage
			for j, p := range corpus.Pages {
				if row[0] == "all" || p.Type == row[0] {
					wp := metric.CompareWords(p.Truth, preds[p.ID])
					ps = append(ps, wp)
					if row[0] == "all" && (records[j].ID != p.ID || records[j].Type != p.Type || records[j].WordF1 != wp.F1) {
						t.Errorf("%s: record %+v, want id %s type %s word F1 %v", name, records[j], p.ID, p.Type, wp.F1)
					}
				}
			}
			if want := fmt.Sprintf("%.3f", metric.AggregateWords(ps).F1); row[2+col] != want {
				t.Errorf("%s on %s: word F1 %s in the table, %s from its predictions", name, row[0], row[2+col], want)
			}
		}
	}

	shingle := section(t, out, "shingle F1 by page type")
	if len(shingle) != 4 || shingle[3][0] != "all" {
		t.Errorf("shingle table %q, want a row for article, forum and all", shingle)
	}
	for _, want := range []string{
		"corpus testdata/wcxb/dev (WCXB layout): 3 pages;",
		"python3 evaluate.py --split dev --results " + filepath.Join(outDir, "distill.json"),
		"\nspeed distill/go-trafilatura: ",
		"\nparse+walk (x/net/html parse and one walk of every node, the floor): ",
		"distill: worst pages per type by word F1",
		"go-readability: worst pages per type by word F1",
		" https://tinkerers.example/t/laptop-fan-after-update/4411\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	// One worst page per type, each under its type.
	worstRows := section(t, out, "distill: worst pages per type by word F1 (word F1, word P, word R, shingle F1, id, url)")
	if len(worstRows) != 4 || worstRows[0][0] != "article" || worstRows[2][0] != "forum" || worstRows[3][4] != "0003" {
		t.Errorf("worst pages %q, want one article and the forum page", worstRows)
	}
}

func TestRunType(t *testing.T) {
	out, err := run(t, Config{Corpus: wcxbFixture, Type: "forum", Only: []string{"distill"}})
	if err != nil {
		t.Fatal(err)
	}
	rows := section(t, out, "word F1 by page type")
	if len(rows) != 3 || rows[1][0] != "forum" || rows[1][1] != "1" || rows[2][0] != "all" || rows[2][1] != "1" {
		t.Errorf("word table %q, want forum and all with one page", rows)
	}
	if !strings.Contains(out, "1 pages of type forum;") || !strings.Contains(out, "(it scores the pages of the other types, absent here, as empty)") {
		t.Errorf("the header does not name the filter:\n%s", out)
	}
}

func TestRunScrapinghub(t *testing.T) {
	dir := writeCorpus(t, `{
		"a": {"articleBody": "The harbour froze over for the first time in forty years."},
		"b": {"articleBody": ""},
		"c": {"articleBody": "A page whose text is lost."}}`,
		map[string]string{
			"a": "<html><body><article><h1>Cold</h1><p>The harbour froze over for the first time in forty years.</p></article></body></html>",
			"b": "<html><body><nav><a href=/>Home</a> <a href=/shop>Shop</a></nav></body></html>",
			"c": "<html><body></body></html>",
		})
	outDir := t.TempDir()
	var buf bytes.Buffer
	cfg := Config{Corpus: dir, OutDir: outDir, Only: []string{"go-readability"}, Worst: 3, Rounds: 1}
	if err := Run(context.Background(), cfg, slog.New(slog.DiscardHandler), &buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	rows := section(t, out, "word F1 by page type")
	if len(rows) != 2 || rows[1][0] != "all" || rows[1][1] != "3" {
		t.Errorf("word table %q, want one row, all", rows)
	}
	for _, want := range []string{"(scrapinghub layout)", "worst pages per type by shingle F1",
		" b  (no truth: only an empty prediction scores)\n", " c  (nothing extracted)\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	var records []pageRecord
	readJSON(t, filepath.Join(outDir, "go-readability.pages.json"), &records)
	if len(records) != 3 || records[0].TruthWords != 11 || records[1].TruthWords != 0 || records[2].PredictionWords != 0 {
		t.Errorf("records %+v, want a's truth of 11 words, b's of none, nothing predicted for c", records)
	}
}

func TestRunBadArguments(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"type absent", Config{Corpus: wcxbFixture, Type: "product"}, `no pages of type "product"; the corpus has article, forum`},
		{"unknown extractor", Config{Corpus: wcxbFixture, Only: []string{"distill", "newspaper"}}, `no extractor "newspaper"`},
		{"not a corpus", Config{Corpus: "testdata"}, "not a corpus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := run(t, tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestRunConfusion(t *testing.T) {
	outDir := t.TempDir()
	var buf bytes.Buffer
	cfg := Config{Corpus: wcxbFixture, OutDir: outDir, Rounds: 1, Only: []string{"distill", "go-readability"}, Confusion: true}
	if err := Run(context.Background(), cfg, slog.New(slog.DiscardHandler), &buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	var records []pageRecord
	readJSON(t, filepath.Join(outDir, "distill.pages.json"), &records)
	counts := map[string]int{}
	for _, r := range records {
		if !slices.Contains(pageTypes, r.PredictedType) {
			t.Errorf("page %s: predicted type %q, want one of %v", r.ID, r.PredictedType, pageTypes)
		}
		counts[r.Type+" "+r.PredictedType]++
	}
	rows := section(t, out, "distill: page types, true (rows) x predicted (columns)")
	header := rows[0]
	if got, want := strings.Join(header, " "), `true\pred `+strings.Join(pageTypes, " ")+" pages right"; got != want {
		t.Fatalf("header %q, want %q", got, want)
	}
	if len(rows) != 4 || rows[1][0] != "article" || rows[2][0] != "forum" || rows[3][0] != "all" {
		t.Fatalf("rows %q, want article, forum and all", rows)
	}
	// Each cell counts the pages written out with that true and predicted type.
	for _, row := range rows[1:3] {
		right := 0
		for i, pred := range header[1 : len(header)-2] {
			if want := fmt.Sprint(counts[row[0]+" "+pred]); row[1+i] != want {
				t.Errorf("%s taken for %s: %s in the table, %s in the records", row[0], pred, row[1+i], want)
			}
			if pred == row[0] {
				right = counts[row[0]+" "+pred]
			}
		}
		n := len(header) - 2
		if want := fmt.Sprintf("%.3f", float64(right)/float64(mustAtoi(t, row[n]))); row[n+1] != want {
			t.Errorf("%s: right %s, want %s", row[0], row[n+1], want)
		}
	}
	if rows[3][1] != "3" {
		t.Errorf("all row %q, want 3 pages", rows[3])
	}
	if !strings.Contains(out, "go-readability: page types, true (rows) x predicted (columns)\n  (reports no page types)\n") {
		t.Errorf("go-readability's matrix does not say it reports no types:\n%s", out)
	}
	var plain []pageRecord
	readJSON(t, filepath.Join(outDir, "go-readability.pages.json"), &plain)
	for _, r := range plain {
		if r.PredictedType != "" {
			t.Errorf("go-readability page %s has predicted type %q", r.ID, r.PredictedType)
		}
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRunConfusionUntyped checks the matrix of a corpus without page
// types: its pages are counted under "-", with nothing to be right about.
func TestRunConfusionUntyped(t *testing.T) {
	dir := writeCorpus(t, `{"a": {"articleBody": "The harbour froze over for the first time in forty years."}}`,
		map[string]string{"a": "<html><body><article><h1>Cold</h1><p>The harbour froze over for the first time in forty years.</p></article></body></html>"})
	out, err := run(t, Config{Corpus: dir, Only: []string{"distill"}, Confusion: true})
	if err != nil {
		t.Fatal(err)
	}
	rows := section(t, out, "distill: page types, true (rows) x predicted (columns)")
	if len(rows) != 2 || rows[1][0] != "-" || rows[1][len(rows[1])-2] != "1" || rows[1][len(rows[1])-1] != "-" {
		t.Errorf("rows %q, want one row of the untyped page, unscored", rows)
	}
}

// distill-rules is distill without its block model, run beside it.
func TestRunRulesBesideDistill(t *testing.T) {
	out, err := run(t, Config{Corpus: wcxbFixture, Only: []string{"distill", "distill-rules"}})
	if err != nil {
		t.Fatal(err)
	}
	rows := section(t, out, "word F1 by page type")
	if len(rows[0]) < 4 || rows[0][2] != "distill" || rows[0][3] != "distill-rules" {
		t.Errorf("word table header %q, want distill and distill-rules", rows[0])
	}
	if !strings.Contains(out, "speed distill/distill-rules:") {
		t.Errorf("no speed ratio of distill to its rules alone:\n%s", out)
	}
	if _, err := run(t, Config{Corpus: wcxbFixture, Only: []string{"distill-model"}}); err == nil || !strings.Contains(err.Error(), "distill-rules") {
		t.Errorf("an unknown extractor: err = %v, want one naming distill-rules among the choices", err)
	}
}

// The extractors take turns stretch by stretch, every round, and each
// runs every page once a round.
func TestTimeStretchesTakesTurnsByStretch(t *testing.T) {
	pages := make([]Page, 2*stretchPages+50)
	for i := range pages {
		pages[i].ID = strconv.Itoa(i)
	}
	var calls []string
	ex := func(name string) Extractor {
		return Extractor{Name: name, Extract: func(_ context.Context, p Page) (string, error) {
			calls = append(calls, name+":"+p.ID)
			return "", nil
		}}
	}
	spent, err := timeStretches(context.Background(), []Extractor{ex("a"), ex("b")}, pages, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(spent) != 2 || spent[0] <= 0 || spent[1] <= 0 {
		t.Errorf("spent = %v, want a time for each extractor", spent)
	}
	var want []string
	for range 2 {
		for s := 0; s < len(pages); s += stretchPages {
			for _, name := range []string{"a", "b"} {
				for i := s; i < min(s+stretchPages, len(pages)); i++ {
					want = append(want, name+":"+strconv.Itoa(i))
				}
			}
		}
	}
	if !slices.Equal(calls, want) {
		t.Errorf("%d calls in another order than the %d expected; first: %v", len(calls), len(want), calls[:min(3, len(calls))])
	}
}
