// Command train-pagetype trains the extractor's page-type classifier on
// a WCXB split (the development one: the held-out split is never read)
// and writes it as Go source for the readable package to embed.
//
// For each page it reads the classifier's inputs (readable.Features) and
// scores, by WCXB's word F1 against the page's truth, the text each of
// readable.Actions draws from it. A multinomial logistic regression learns
// the page type from the inputs. A page gets its likeliest type (an
// article's odds counted -article-odds times), marked uncertain when the
// hedged draw of an uncertain article promises more F1, by the mean F1
// each draw reached on the training pages of each type weighted by the
// types' probabilities. It prints the out-of-fold figures of k-fold
// cross-validation (accuracy, confusion matrix, and the word F1 the
// decisions reach next to the embedded classifier's, an unconstrained
// expected-F1 choice of draw, and an oracle) before training on every page.
package main

import (
	"bytes"
	"context"
	"encoding/gob"
	"flag"
	"fmt"
	"go/format"
	"io"
	"math"
	"math/rand/v2"
	"net/url"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"

	"distill.dev/services/extractor/bench/harness"
	"distill.dev/services/extractor/bench/metric"
	"distill.dev/services/extractor/plaintext"
	"distill.dev/services/extractor/readable"
)

func save(path string, samples []sample) error {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(samples); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

func load(path string) ([]sample, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var samples []sample
	err = gob.NewDecoder(bytes.NewReader(b)).Decode(&samples)
	return samples, err
}

// sample is one page's inputs, type and the F1 of each action on it.
type sample struct {
	ID    string
	X     []float64
	Class int
	F1    []float64
	// Rules is the action the embedded classifier (Classify) takes.
	Rules int
}

// articleOdds is the model's ArticleOdds.
var articleOdds float64

// classes are the types the model tells apart: WCXB's.
var classes = []readable.PageType{readable.TypeArticle, readable.TypeForum, readable.TypeProduct,
	readable.TypeCollection, readable.TypeListing, readable.TypeDocumentation, readable.TypeService}

func main() {
	var o options
	flag.StringVar(&o.corpus, "corpus", "", "WCXB development split `dir`")
	flag.StringVar(&o.out, "out", "", "write the trained model as Go source to `file` (readable/pagetype_model.go); empty writes nothing")
	flag.IntVar(&o.folds, "folds", 5, "cross-validation folds")
	flag.Float64Var(&o.l2, "l2", 1e-2, "L2 penalty on the weights")
	flag.IntVar(&o.iters, "iters", 800, "gradient steps")
	flag.Float64Var(&articleOdds, "article-odds", 1.5, "multiply an article's odds by `k` before taking the likeliest type")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the fold assignment")
	flag.StringVar(&o.cache, "cache", "", "keep the pages' inputs and scores in `file` and read them from there when it exists (for trying penalties; stale once the features or the reader change)")
	flag.Parse()
	if err := run(o, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "train-pagetype:", err)
		os.Exit(1)
	}
}

type options struct {
	corpus, out, cache string
	folds, iters       int
	l2                 float64
	seed               uint64
}

func run(o options, w, progress io.Writer) error {
	if o.folds < 2 {
		return fmt.Errorf("-folds %d: need at least 2", o.folds)
	}
	if o.cache != "" {
		if samples, err := load(o.cache); err == nil {
			cv(w, samples, classes, o.folds, o.seed, o.l2, o.iters)
			return write(o.out, samples, o.l2, o.iters)
		}
	}

	c, err := harness.LoadCorpus(o.corpus)
	if err != nil {
		return err
	}
	if c.Layout != harness.WCXB {
		return fmt.Errorf("%s is not a WCXB split", o.corpus)
	}
	var samples []sample
	for i, p := range c.Pages {
		cl := slices.Index(classes, readable.PageType(p.Type))
		if cl < 0 {
			continue
		}
		s, err := read(p)
		if err != nil {
			return fmt.Errorf("page %s: %w", p.ID, err)
		}
		s.Class = cl
		samples = append(samples, s)
		if (i+1)%250 == 0 {
			fmt.Fprintf(progress, "%d pages read\n", i+1)
		}
	}

	if o.cache != "" {
		if err := save(o.cache, samples); err != nil {
			return err
		}
	}
	cv(w, samples, classes, o.folds, o.seed, o.l2, o.iters)
	return write(o.out, samples, o.l2, o.iters)
}

// write trains the model on every sample and writes it to out, if named.
func write(out string, samples []sample, l2 float64, iters int) error {
	if out == "" {
		return nil
	}
	m := train(samples, classes, allIdx(len(samples)), l2, iters)
	src, err := format.Source(source(m, len(samples), l2, iters))
	if err != nil {
		return err
	}
	return os.WriteFile(out, src, 0o644)
}

func allIdx(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// read parses p as the extractor does (decoded to UTF-8, noscript shown
// on a thin page) and draws it every way readable.Actions says.
func read(p harness.Page) (sample, error) {
	body, err := decode(p.HTML)
	if err != nil {
		return sample{}, err
	}
	u, _ := url.Parse(p.URL)
	parse := func() (*html.Node, error) {
		doc, err := html.Parse(bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		readable.ShowStreamed(doc)
		readable.DropVariants(doc)
		readable.ShowNoscript(doc)
		return doc, nil
	}
	doc, err := parse()
	if err != nil {
		return sample{}, err
	}
	s := sample{ID: p.ID, X: readable.Features(doc, u)}
	kind := readable.Classify(doc, u)
	s.Rules = actionOf(kind)
	for _, a := range readable.Actions() {
		doc, err := parse()
		if err != nil {
			return sample{}, err
		}
		a.Product = kind.Product
		// The rules alone: the block model is trained after this one, on
		// its types, and would score its own training pages here.
		content, err := readable.ArticleWith(nil)(context.Background(), doc, a)
		if err != nil {
			return sample{}, err
		}
		s.F1 = append(s.F1, metric.CompareWords(p.Truth, plaintext.Render(content)).F1)
	}
	return s, nil
}

func decode(b []byte) ([]byte, error) {
	r, err := charset.NewReader(bytes.NewReader(b), "text/html")
	if err != nil {
		return b, nil
	}
	return io.ReadAll(r)
}

// actionOf is the index in readable.Actions of the draw page gets.
func actionOf(page readable.Page) int {
	switch {
	case page.Uncertain || page.Type == readable.TypeOther:
		return 1
	case page.Type == readable.TypeCollection || page.Type == readable.TypeListing || page.Type == readable.TypeService:
		return 4
	}
	for a, p := range readable.Actions() {
		if p.Type == page.Type && !p.Uncertain {
			return a
		}
	}
	return 1
}

// cv prints the out-of-fold figures of k-fold cross-validation,
// stratified by type.
func cv(w io.Writer, samples []sample, classes []readable.PageType, k int, seed uint64, l2 float64, iters int) {
	fold := assignFolds(samples, classes, k, seed)
	pred, bayes := predictOutOfFold(samples, classes, fold, k, l2, iters)
	fmt.Fprintf(w, "%d-fold cross-validation, out of fold, %d pages (L2 %g, %d steps, article odds x%g)\n\n", k, len(samples), l2, iters, articleOdds)
	confusionTable(w, samples, classes, pred, bayes)
	fmt.Fprintln(w, "\nF1 now: the draw the embedded model chooses (trained on these pages: in sample); model: the likeliest type's, or an uncertain article's when that")
	fmt.Fprintln(w, "promises more, or a thread's for a page likeliest to be one (Page); bayes: the draw of best expected F1 (Decide); oracle: the true type's (certain)")
	utilityTable(w, samples, classes, l2)
}

// assignFolds deals each type's samples, shuffled by seed, into k folds in
// turn, and returns each sample's fold.
func assignFolds(samples []sample, classes []readable.PageType, k int, seed uint64) []int {
	fold := make([]int, len(samples))
	rng := rand.New(rand.NewPCG(seed, 7))
	for c := range classes {
		var idx []int
		for i, s := range samples {
			if s.Class == c {
				idx = append(idx, i)
			}
		}
		rng.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
		for j, i := range idx {
			fold[i] = j % k
		}
	}
	return fold
}

// predictOutOfFold trains a model on the other folds for each of the k
// folds and returns what it makes of each sample of the fold: its Page,
// and the draw of best expected F1 (bayes).
func predictOutOfFold(samples []sample, classes []readable.PageType, fold []int, k int, l2 float64, iters int) (pred, bayes []readable.Page) {
	pred = make([]readable.Page, len(samples))
	bayes = make([]readable.Page, len(samples))
	for f := range k {
		var trainIdx []int
		for i := range samples {
			if fold[i] != f {
				trainIdx = append(trainIdx, i)
			}
		}
		m := train(samples, classes, trainIdx, l2, iters)
		for i, s := range samples {
			if fold[i] == f {
				pred[i] = m.Page(s.X)
				bayes[i] = pred[i]
				if pred[i].Type != readable.TypeOther && !(pred[i].Type == readable.TypeForum && !pred[i].Uncertain && m.Classify(m.Probabilities(s.X)).Type != readable.TypeForum) {
					bayes[i] = m.Decide(m.Probabilities(s.X))
				}
			}
		}
	}
	return pred, bayes
}

// confusionTable prints, for each true type, the types predicted for its
// pages and the mean word F1 of the draws the embedded classifier, the
// model (pred), the expected-F1 choice (bayes) and an oracle make.
func confusionTable(w io.Writer, samples []sample, classes []readable.PageType, pred, bayes []readable.Page) {
	cols := append(slices.Clone(classes), readable.TypeOther)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "true\\pred\t")
	for _, c := range cols {
		fmt.Fprintf(tw, "%s\t", c)
	}
	fmt.Fprintln(tw, "pages\tright\tuncertain\tF1 now\tF1 model\tF1 bayes\tF1 oracle\t")
	right := 0
	var allRules, allModel, allBayes, allOracle float64
	for c, t := range classes {
		counts := map[readable.PageType]int{}
		n, unsure := 0, 0
		var fr, fm, fb, fo float64
		for i, s := range samples {
			if s.Class != c {
				continue
			}
			n++
			counts[pred[i].Type]++
			if pred[i].Uncertain {
				unsure++
			}
			fr += s.F1[s.Rules]
			fm += s.F1[actionOf(pred[i])]
			fb += s.F1[actionOf(bayes[i])]
			fo += s.F1[actionOf(readable.Page{Type: t})]
		}
		right += counts[t]
		allRules += fr
		allModel += fm
		allBayes += fb
		allOracle += fo
		fmt.Fprintf(tw, "%s\t", t)
		for _, col := range cols {
			fmt.Fprintf(tw, "%d\t", counts[col])
		}
		fmt.Fprintf(tw, "%d\t%.3f\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t\n", n, float64(counts[t])/float64(n), unsure, fr/float64(n), fm/float64(n), fb/float64(n), fo/float64(n))
	}
	n := float64(len(samples))
	fmt.Fprintf(tw, "all\t%s%d\t%.3f\t\t%.3f\t%.3f\t%.3f\t%.3f\t\n", strings.Repeat("\t", len(cols)), len(samples), float64(right)/n, allRules/n, allModel/n, allBayes/n, allOracle/n)
	tw.Flush()
}

// utilityTable prints what each draw gives each type, over all pages: the
// table the decisions weigh.
func utilityTable(w io.Writer, samples []sample, classes []readable.PageType, l2 float64) {
	m := train(samples, classes, allIdx(len(samples)), l2, 0)
	fmt.Fprintln(w, "\nmean word F1 of each draw (columns: readable.Actions) by true type")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "type\t")
	for _, a := range readable.Actions() {
		name := string(a.Type)
		if a.Uncertain {
			name += "?"
		}
		fmt.Fprintf(tw, "%s\t", name)
	}
	fmt.Fprintln(tw)
	for c, t := range classes {
		fmt.Fprintf(tw, "%s\t", t)
		for _, u := range m.Utility[c] {
			fmt.Fprintf(tw, "%.3f\t", u)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// train fits the model on the samples idx.
func train(samples []sample, classes []readable.PageType, idx []int, l2 float64, iters int) *readable.Model {
	d := len(samples[0].X)
	m := &readable.Model{Features: readable.FeatureNames(), Classes: classes, Mean: make([]float64, d), Scale: make([]float64, d), ArticleOdds: articleOdds}
	standardise(m, samples, idx)
	fitWeights(m, samples, idx, l2, iters)
	m.Utility = utilities(samples, len(classes), idx)
	return m
}

// standardise sets m's Mean and Scale to the mean and standard deviation
// of each input over the samples idx (a scale of 1 for a constant input).
func standardise(m *readable.Model, samples []sample, idx []int) {
	for _, i := range idx {
		for j, v := range samples[i].X {
			m.Mean[j] += v
		}
	}
	for j := range m.Mean {
		m.Mean[j] /= float64(len(idx))
	}
	for _, i := range idx {
		for j, v := range samples[i].X {
			m.Scale[j] += (v - m.Mean[j]) * (v - m.Mean[j])
		}
	}
	for j := range m.Scale {
		m.Scale[j] = math.Sqrt(m.Scale[j] / float64(len(idx)))
		if m.Scale[j] < 1e-9 {
			m.Scale[j] = 1
		}
	}
}

// fitWeights learns m's Weights (a row per class, the bias last) from the
// samples idx by iters steps of full-batch gradient descent with Adam
// steps and an L2 penalty of l2: the problem is small and convex, so plain
// and reproducible beats clever.
func fitWeights(m *readable.Model, samples []sample, idx []int, l2 float64, iters int) {
	k, d := len(m.Classes), len(m.Mean)
	m.Weights = make([][]float64, k)
	mom := make([][]float64, k)
	vel := make([][]float64, k)
	for c := range k {
		m.Weights[c] = make([]float64, d+1)
		mom[c] = make([]float64, d+1)
		vel[c] = make([]float64, d+1)
	}
	const lr, b1, b2, eps = 0.05, 0.9, 0.999, 1e-8
	z := make([]float64, d)
	for step := 1; step <= iters; step++ {
		grad := gradient(m, samples, idx, z)
		n := float64(len(idx))
		for c := range k {
			for j := range d + 1 {
				g := grad[c][j] / n
				if j < d {
					g += l2 * m.Weights[c][j]
				}
				mom[c][j] = b1*mom[c][j] + (1-b1)*g
				vel[c][j] = b2*vel[c][j] + (1-b2)*g*g
				mh := mom[c][j] / (1 - math.Pow(b1, float64(step)))
				vh := vel[c][j] / (1 - math.Pow(b2, float64(step)))
				m.Weights[c][j] -= lr * mh / (math.Sqrt(vh) + eps)
			}
		}
	}
}

// gradient sums, over the samples idx, the gradient of the cross-entropy
// loss of m's weights (unpenalised, undivided); z is scratch of one
// sample's inputs, standardised.
func gradient(m *readable.Model, samples []sample, idx []int, z []float64) [][]float64 {
	k, d := len(m.Classes), len(m.Mean)
	grad := make([][]float64, k)
	for c := range grad {
		grad[c] = make([]float64, d+1)
	}
	for _, i := range idx {
		s := samples[i]
		for j, v := range s.X {
			z[j] = (v - m.Mean[j]) / m.Scale[j]
		}
		p := m.Probabilities(s.X)
		for c := range k {
			g := p[c]
			if c == s.Class {
				g--
			}
			for j := range d {
				grad[c][j] += g * z[j]
			}
			grad[c][d] += g
		}
	}
	return grad
}

// utilities is the mean F1 each of readable.Actions reaches on the
// samples idx of each of the k classes.
func utilities(samples []sample, k int, idx []int) [][]float64 {
	u := make([][]float64, k)
	for c := range k {
		u[c] = make([]float64, len(readable.Actions()))
		n := 0
		for _, i := range idx {
			if samples[i].Class != c {
				continue
			}
			n++
			for a, f := range samples[i].F1 {
				u[c][a] += f
			}
		}
		for a := range u[c] {
			u[c][a] /= float64(max(n, 1))
		}
	}
	return u
}

// source writes m as the Go file the readable package embeds.
func source(m *readable.Model, pages int, l2 float64, iters int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by train-pagetype (make train-pagetype) from %d pages of the WCXB development split, L2 %g, %d steps; DO NOT EDIT.\n\n", pages, l2, iters)
	fmt.Fprintf(&b, "package readable\n\n")
	fmt.Fprintf(&b, "var typeModel = &Model{\n")
	fmt.Fprintf(&b, "\tFeatures: []string{")
	for i, n := range m.Features {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", n)
	}
	b.WriteString("},\n")
	floats := func(name string, v []float64) {
		fmt.Fprintf(&b, "\t%s: %s,\n", name, floatList(v))
	}
	floats("Mean", m.Mean)
	floats("Scale", m.Scale)
	b.WriteString("\tClasses: []PageType{")
	for i, c := range m.Classes {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", string(c))
	}
	b.WriteString("},\n")
	for _, mat := range []struct {
		name string
		rows [][]float64
	}{{"Weights", m.Weights}, {"Utility", m.Utility}} {
		fmt.Fprintf(&b, "\t%s: [][]float64{\n", mat.name)
		for _, r := range mat.rows {
			fmt.Fprintf(&b, "\t\t%s,\n", floatList(r))
		}
		b.WriteString("\t},\n")
	}
	fmt.Fprintf(&b, "\tArticleOdds: %g,\n", m.ArticleOdds)
	b.WriteString("}\n")
	return b.Bytes()
}

func floatList(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.4g", x)
	}
	return "[]float64{" + strings.Join(parts, ", ") + "}"
}
