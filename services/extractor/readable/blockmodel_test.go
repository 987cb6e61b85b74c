package readable

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

func TestEmbeddedBlockModelLoads(t *testing.T) {
	t.Parallel()
	m := DefaultBlockModel()
	if m == nil {
		t.Fatal("the embedded block model does not load: retrain it with make train-blocks after changing the features")
	}
	nonzero := 0
	for _, w := range m.w {
		if w != 0 {
			nonzero++
		}
	}
	if nonzero < 1000 {
		t.Errorf("embedded model has %d nonzero weights; a trained one has thousands", nonzero)
	}
	// Threads and products are where the rules keep the most furniture:
	// the model must be on for them.
	for _, typ := range []PageType{TypeForum, TypeProduct} {
		if th, ok := m.Thresholds[typ]; !ok || th <= 0 || th >= 1 {
			t.Errorf("threshold for %s = %v, %v; want one in (0, 1)", typ, th, ok)
		}
	}
}

// toyExamples: feature 1 marks content, feature 2 furniture, feature 3
// is on every block.
func toyExamples() []Example {
	var ex []Example
	for i := range 200 {
		ex = append(ex,
			Example{Features: []uint32{1, 3, uint32(100 + i%7)}, Content: true, Weight: 1},
			Example{Features: []uint32{2, 3, uint32(100 + i%5)}, Content: false, Weight: 1})
	}
	return ex
}

func toyConfig() TrainConfig {
	return TrainConfig{Bits: 10, Epochs: 3, Alpha: 0.1, Beta: 1, L1: 0.1, L2: 0.1, Seed: 7}
}

func TestTrainBlockModelLearnsAndRepeats(t *testing.T) {
	t.Parallel()
	m := TrainBlockModel(toyExamples(), toyConfig())
	if p := m.Prob([]uint32{1, 3}); p < 0.8 {
		t.Errorf("content block rated %.2f, want > 0.8", p)
	}
	if p := m.Prob([]uint32{2, 3}); p > 0.2 {
		t.Errorf("furniture block rated %.2f, want < 0.2", p)
	}
	a, _ := m.MarshalBinary()
	b, _ := TrainBlockModel(toyExamples(), toyConfig()).MarshalBinary()
	if !bytes.Equal(a, b) {
		t.Error("the same examples and config trained two different models")
	}
}

func TestBlockModelRoundTrip(t *testing.T) {
	t.Parallel()
	m := TrainBlockModel(toyExamples(), toyConfig())
	m.Threshold = 0.3
	m.Thresholds = map[PageType]float32{TypeForum: 0.45, TypeProduct: 0.2}
	data, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back BlockModel
	if err := back.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.w, m.w) || back.Threshold != 0.3 || back.threshold(TypeForum) != 0.45 ||
		back.threshold(TypeProduct) != 0.2 || back.threshold(TypeArticle) != 0.3 {
		t.Errorf("decoded model differs: thresholds %v %v", back.Threshold, back.Thresholds)
	}
}

func TestBlockModelRefusesDamagedFiles(t *testing.T) {
	t.Parallel()
	m := TrainBlockModel(toyExamples(), toyConfig())
	m.Thresholds = map[PageType]float32{TypeForum: 0.4}
	good, _ := m.MarshalBinary()
	damaged := map[string][]byte{
		"empty":          nil,
		"other magic":    append([]byte("DBM1"), good[4:]...),
		"trailing bytes": append(slices.Clone(good), 0),
		"hash too wide":  append(append(slices.Clone(good[:8]), 30, 0, 0, 0), good[12:]...),
	}
	for cut := 1; cut < len(good); cut += max(1, len(good)/40) {
		damaged["cut at "+string(rune('0'+cut%10))+strings.Repeat("+", cut/10%5)] = good[:cut]
	}
	// A weight index past the table.
	bad := slices.Clone(good)
	copy(bad[len(bad)-8:], []byte{0xff, 0xff, 0xff, 0x7f})
	damaged["index out of range"] = bad
	for name, data := range damaged {
		var got BlockModel
		if err := got.UnmarshalBinary(data); !errors.Is(err, errBadModel) {
			t.Errorf("%s: err = %v, want errBadModel", name, err)
		}
	}

	// A model of other features: its fingerprint differs.
	other := slices.Clone(good)
	other[4] ^= 0xff
	var got BlockModel
	if err := got.UnmarshalBinary(other); !errors.Is(err, ErrOtherFeatures) {
		t.Errorf("model of other features: err = %v, want ErrOtherFeatures", err)
	}
}

func TestFeatureFingerprintFollowsTheFeatures(t *testing.T) {
	t.Parallel()
	// The fingerprint page yields blocks of every kind it is meant to
	// exercise, so a change to any feature changes the fingerprint.
	doc := parse(t, fingerprintPage)
	body := htmlnode.First(doc, "body")
	st := measure(body)
	blocks := segment(body, st, Page{Type: TypeProduct}, titleWords(doc), false, nil)
	placeInContent(body, blocks, Page{Type: TypeProduct})
	kept, withTime := 0, false
	for _, b := range blocks {
		if b.kept {
			kept++
		}
		if strings.Contains(blockText(b.n), "Jan 2") {
			withTime = b.kept
		}
	}
	if len(blocks) < 10 || kept < 4 || !withTime {
		t.Errorf("fingerprint page: %d blocks, %d always kept, dated block kept %v", len(blocks), kept, withTime)
	}
	// Any change to the features changes the digest: here, the page type
	// every block's features carry.
	if fingerprintOf(TypeProduct) != featureFingerprint() || fingerprintOf(TypeForum) == featureFingerprint() {
		t.Error("the fingerprint does not follow the features")
	}
}

func TestSplitName(t *testing.T) {
	t.Parallel()
	tests := map[string][]string{
		"postAuthor-name__link": {"post", "author", "name", "link"},
		"mw-references-wrap":    {"mw", "references", "wrap"},
		"a b2 x 2024 col-12":    {"b2", "col"},
		"HTMLPage":              {"htmlpage"},
		"":                      nil,
	}
	for in, want := range tests {
		if got := splitName(in); !slices.Equal(got, want) {
			t.Errorf("splitName(%q) = %q, want %q", in, got, want)
		}
	}
}

// shopPage is a product page whose description sits among furniture the
// rules keep: a promotion and a newsletter box.
const shopPage = `<html><head><title>Trail Flask 600 - Shop</title></head><body>
<main><h1>Trail Flask 600</h1>
<div class="desc"><p>A steel flask that keeps water cold for a full day on the trail, with a loop for a carabiner.</p>
<p>Its cap seals with a quarter turn and the body takes a standard bottle cage.</p></div>
<div class="price">€24.00</div>
<div class="meta">Added by <a href="/u/kim">kim</a> <time datetime="2025-01-02">Jan 2, 2025</time></div>
<div class="offer"><p>Free shipping on orders over fifty euros this week only</p></div>
<div class="box">Join our newsletter for deals<p>We send one email a month about new gear.</p></div>
<div class="card">Sale ends soon <a href="/gear"><p>The flask ships with a brush for cleaning its narrow neck.</p></a></div>
</main></body></html>`

func TestArticleWithDropsWhatTheModelRatesLow(t *testing.T) {
	t.Parallel()
	page := Page{Type: TypeProduct}
	samples, err := Samples(context.Background(), parse(t, shopPage), page)
	if err != nil {
		t.Fatal(err)
	}
	var examples []Example
	kept := 0
	for _, s := range samples {
		if !s.Kept {
			continue
		}
		kept++
		furniture := strings.Contains(s.Text, "shipping") || strings.Contains(s.Text, "newsletter") || strings.Contains(s.Text, "Sale ends") ||
			strings.Contains(s.Text, "€") || strings.Contains(s.Text, "Added by")
		for range 50 {
			examples = append(examples, Example{Features: s.Features, Content: !furniture, Weight: 1})
		}
	}
	if kept < 6 {
		t.Fatalf("the rules keep %d blocks of the shop page, want all of them", kept)
	}
	m := TrainBlockModel(examples, TrainConfig{Bits: 16, Epochs: 4, Alpha: 0.2, Beta: 1, L1: 0.01, L2: 0.01, Seed: 1})
	m.Threshold = 0.5

	content, err := ArticleWith(m)(context.Background(), parse(t, shopPage), page)
	if err != nil {
		t.Fatal(err)
	}
	text := htmlnode.Text(content)
	for _, want := range []string{
		"Trail Flask 600", "keeps water cold", "quarter turn",
		"€24.00",      // a product's price is kept whatever the model says
		"Jan 2, 2025", // so is a block holding a date
		"one email",   // a block nested in a dropped one keeps its own text
		"narrow neck", // so does one a dropped block's link wraps
	} {
		if !strings.Contains(text, want) {
			t.Errorf("content lacks %q:\n%s", want, text)
		}
	}
	for _, gone := range []string{"Free shipping", "Join our newsletter", "Sale ends"} {
		if strings.Contains(text, gone) {
			t.Errorf("content keeps %q, which the model rates low:\n%s", gone, text)
		}
	}
	htmlnode.Walk(content, func(n *html.Node) bool {
		if htmlnode.Attr(n, "class") == "offer" {
			t.Error("the offer's emptied block stays in the tree")
		}
		return true
	})

	// Without a model the rules' choice stands.
	rules, err := ArticleWith(nil)(context.Background(), parse(t, shopPage), page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(htmlnode.Text(rules), "Free shipping") {
		t.Error("ArticleWith(nil) dropped a block")
	}
}

func TestSamplesMarkWhatTheRulesKeep(t *testing.T) {
	t.Parallel()
	page := `<html><body><nav><a href="/">Home</a> <a href="/about">About us</a></nav>
<article><h1>Rivers</h1><p>` + prose("river", 5) + `</p><p>` + prose("bridge", 5) + `</p></article>
<footer><p>Copyright the river society, all rights reserved.</p></footer></body></html>`
	samples, err := Samples(context.Background(), parse(t, page), Page{Type: TypeArticle})
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]bool{}
	for _, s := range samples {
		if len(s.Features) < 20 {
			t.Errorf("block %q has %d features", s.Text, len(s.Features))
		}
		kept[strings.Fields(s.Text)[0]] = s.Kept
	}
	want := map[string]bool{"Home": false, "Rivers": true, "The": true, "Copyright": false}
	for first, k := range want {
		if got, ok := kept[first]; !ok || got != k {
			t.Errorf("block starting %q: kept %v (found %v), want %v", first, got, ok, k)
		}
	}
}

func TestAppendFieldsSplitsAsFields(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "  ", "one", " two  words ", "tab\tand\nnew line", "non\u00a0breaking space\u2003em", "日本語 テキスト"} {
		if got, want := appendFields(nil, s), strings.Fields(s); !slices.Equal(got, want) {
			t.Errorf("appendFields(%q) = %q, want %q", s, got, want)
		}
	}
}
