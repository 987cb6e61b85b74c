package readable

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// A textBlock is an element that holds text of its own: text nodes and inline
// elements as its children, outside any block element nested in it. The
// blocks of a page partition its text, so a decision per block is a
// decision for every word of the page.
type textBlock struct {
	n *html.Node
	// feats are the hashed features the block model reads, computed before
	// the rules edit the tree, since they read the block's ancestors.
	feats []uint32
	// text is the block's own text, kept only for training.
	text string
	// runes and words measure the block's own text.
	runes, words int
	isH1         bool
	// kept says the block stays whatever the model rates it; see keeps.
	kept bool
}

// ownText reports the visible text of n outside its block descendants,
// in non-space runes, and how much of it sits in links.
func ownText(n *html.Node, st treeStats) (text, link int) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case c.Type == html.TextNode:
			text += nonSpace(c.Data)
		case c.Type == html.ElementNode && inlineTags[c.Data]:
			s := st.of(c)
			if s.blocks {
				// A link or span wrapping blocks: only its own text.
				t, l := ownText(c, st)
				s.text, s.link = t, l
				if c.Data == "a" {
					s.link = t
				}
			}
			text += s.text
			link += s.link
		}
	}
	return text, link
}

// blockText is the text a block holds itself, words separated by spaces:
// the unit the block model is trained on.
func blockText(n *html.Node) string {
	var b strings.Builder
	var add func(n *html.Node)
	add = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch {
			case c.Type == html.TextNode:
				b.WriteString(c.Data)
				b.WriteByte(' ')
			case c.Type == html.ElementNode && inlineTags[c.Data]:
				add(c)
			}
		}
	}
	add(n)
	return b.String()
}

// segment lists the blocks of root, in document order, with their
// features. page is what the classifier said of the page. keep, when not
// nil, says which blocks the content will hold: the others are listed,
// since a block's place counts among all, but not featurized.
func segment(root *html.Node, st treeStats, page Page, title map[string]bool, withText bool, keep func(*html.Node) bool) []textBlock {
	var blocks []textBlock
	var walk func(n *html.Node)
	var nodes []*html.Node
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			if !inlineTags[c.Data] {
				if t, _ := ownText(c, st); t > 0 {
					nodes = append(nodes, c)
				}
			}
			walk(c)
		}
	}
	if t, _ := ownText(root, st); t > 0 {
		nodes = append(nodes, root)
	}
	walk(root)
	fx := featurizer{st: st, page: page, total: len(nodes), root: root, title: title}
	blocks = make([]textBlock, len(nodes))
	for i, n := range nodes {
		if keep != nil && !keep(n) {
			blocks[i] = textBlock{n: n}
			continue
		}
		blocks[i] = textBlock{n: n, feats: fx.features(n, i)}
		blocks[i].runes, blocks[i].words = fx.runes, fx.words
		blocks[i].isH1 = n.Data == "h1" || htmlnode.Closest(n, "h1") != nil
		blocks[i].kept = fx.keeps(n, page)
		if withText {
			blocks[i].text = fx.text
		}
	}
	return blocks
}

type featurizer struct {
	st    treeStats
	page  Page
	total int
	root  *html.Node
	out   []uint32
	// words, runes (non-space) and text are those of the last block
	// featurized, its own text.
	words, runes int
	text         string
	title        map[string]bool
	names        map[*html.Node]*nameFeats // see nameFeatures
	classes      map[string]*nameFeats     // by class, for elements without an id
	parents      map[*html.Node][]uint32   // see above
	alike        map[*html.Node]map[alikeKey]int
	fields       []string // the words of the block being featurized
}

// alikeKey is an element's tag and class.
type alikeKey struct{ tag, class string }

// alikeSiblings counts n's siblings with its tag and class, up to 16,
// counting each parent's children once for all of them.
func (f *featurizer) alikeSiblings(n *html.Node) int {
	if n.Parent == nil {
		return 0
	}
	counts, ok := f.alike[n.Parent]
	if !ok {
		counts = map[alikeKey]int{}
		for c := n.Parent.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode {
				counts[alikeKey{c.Data, htmlnode.Attr(c, "class")}]++
			}
		}
		if f.alike == nil {
			f.alike = map[*html.Node]map[alikeKey]int{}
		}
		f.alike[n.Parent] = counts
	}
	return min(counts[alikeKey{n.Data, htmlnode.Attr(n, "class")}]-1, 16)
}

// appendFields appends the white-space separated words of s to words, as
// strings.Fields splits them, reusing words' array.
func appendFields(words []string, s string) []string {
	start := -1
	for i, r := range s {
		if unicode.IsSpace(r) {
			if start >= 0 {
				words = append(words, s[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		words = append(words, s[start:])
	}
	return words
}

func (f *featurizer) add(parts ...string) {
	f.out = append(f.out, hashParts(parts...))
}

// hashParts is the 32-bit FNV-1a hash of parts joined by '|', computed
// without allocating: features are hashed by the hundred per block.
func hashParts(parts ...string) uint32 {
	const prime = 16777619
	h := uint32(2166136261)
	for i, p := range parts {
		if i > 0 {
			h ^= '|'
			h *= prime
		}
		for j := 0; j < len(p); j++ {
			h ^= uint32(p[j])
			h *= prime
		}
	}
	return h
}

func bucket(x float64, edges ...float64) string {
	for i, e := range edges {
		if x < e {
			return strconv.Itoa(i)
		}
	}
	return strconv.Itoa(len(edges))
}

// landmarks are the ancestors whose presence says where a block sits.
var landmarks = map[string]bool{
	"main": true, "article": true, "nav": true, "header": true, "footer": true,
	"aside": true, "form": true, "li": true, "table": true, "ul": true, "ol": true,
	"section": true, "blockquote": true, "figure": true, "dl": true, "menu": true,
	"button": true, "label": true, "pre": true, "details": true, "summary": true,
}

// features are the hashed features of block n, the index-th of the
// page's blocks: its own shape and text, the words it holds, and the
// elements around it. The model sums their weights in this order, so
// the order is kept.
func (f *featurizer) features(n *html.Node, index int) []uint32 {
	f.out = make([]uint32, 0, 64)
	pt := f.pageTypeName()
	text, link := ownText(n, f.st)
	f.runes = text
	f.text = blockText(n)
	f.fields = appendFields(f.fields[:0], f.text)
	f.words = len(f.fields)
	f.addShape(n, index, pt, text, link)
	f.addText(scanText(f.text))
	f.addWords()
	// The block itself, then its ancestors: tags, class and id words,
	// landmarks and the rules' hints. The ancestors' features are the same
	// for every child of one parent, so they are computed once per parent.
	f.element(n, 0, pt, nil)
	if n == f.root || n.Parent == nil || n.Parent.Type != html.ElementNode {
		f.add("depth", bucket(0, 4, 8, 12, 16, 24))
		return f.out
	}
	f.out = append(f.out, f.above(n.Parent, pt)...)
	return f.out
}

// pageTypeName is the page's type as the block features name it: other
// when unclassified, marked with a "?" when uncertain.
func (f *featurizer) pageTypeName() string {
	pt := string(f.page.Type)
	if pt == "" {
		pt = "other"
	}
	if f.page.Uncertain {
		pt += "?"
	}
	return pt
}

// addShape adds the features of the block's size, link density and
// place in the page, alone and with its tag and the page's type pt. n is
// the block, the index-th of the page's; text and link are the runes of
// its own text and of the links in it.
func (f *featurizer) addShape(n *html.Node, index int, pt string, text, link int) {
	ld := 0.0
	if text > 0 {
		ld = float64(link) / float64(text)
	}
	wb := bucket(math.Log2(float64(f.words)+1), 1.01, 2.01, 3, 4, 5, 6, 7, 8)
	ldb := bucket(ld, 0.01, 0.2, 0.5, 0.8, 0.99)
	f.add("bias")
	f.add("pt", pt)
	f.add("t", n.Data)
	f.add("pt", pt, "t", n.Data)
	f.add("w", wb)
	f.add("pt", pt, "w", wb)
	f.add("ld", ldb)
	f.add("pt", pt, "ld", ldb)
	f.add("w", wb, "ld", ldb)
	f.add("t", n.Data, "w", wb)
	f.add("pos", bucket(float64(index)/float64(max(f.total, 1)), 0.05, 0.1, 0.2, 0.35, 0.5, 0.65, 0.8, 0.9, 0.95))
	f.add("pt", pt, "pos", bucket(float64(index)/float64(max(f.total, 1)), 0.1, 0.3, 0.7, 0.9))
}

// textMarks is what one pass over a block's text counts for the
// features: its digits and letters, and whether it has a currency sign
// and a copyright mark or a separator bar.
type textMarks struct {
	digits, letters    int
	currency, copyMark bool
}

// scanText reads s's textMarks.
func scanText(s string) textMarks {
	var m textMarks
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			switch {
			case r >= '0' && r <= '9':
				m.digits++
			case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
				m.letters++
			case r == '$':
				m.currency = true
			case r == '|':
				m.copyMark = true
			}
		case r == '€' || r == '£' || r == '¥' || r == '₹':
			m.currency = true
		case r == '©':
			m.copyMark = true
		case unicode.IsDigit(r):
			m.digits++
		case unicode.IsLetter(r):
			m.letters++
		}
	}
	return m
}

// addText adds the features of the block's text as a whole, whose marks
// are m: how it ends, its share of digits, its commas, a price, the
// title's words it repeats, a copyright line.
func (f *featurizer) addText(m textMarks) {
	s, words := f.text, f.words
	trimmed := strings.TrimSpace(s)
	if r, _ := utf8.DecodeLastRuneInString(trimmed); r == '.' || r == '!' || r == '?' || r == '。' || r == ':' {
		f.add("end", string(r))
	}
	if m.letters+m.digits > 0 {
		f.add("dig", bucket(float64(m.digits)/float64(m.letters+m.digits), 0.01, 0.1, 0.3, 0.6))
	}
	commas := strings.Count(s, ",")
	f.add("commas", bucket(float64(commas), 1, 2, 4, 8))
	if m.currency && hasPrice(s) {
		f.add("price")
	}
	if len(f.title) > 0 && words > 0 && words <= 40 {
		hits := 0
		for _, w := range f.fields {
			if f.title[normWord(w)] {
				hits++
			}
		}
		f.add("title", bucket(float64(hits)/float64(words), 0.01, 0.3, 0.6, 0.9))
	}
	if m.copyMark {
		f.add("sym", "copy")
	}
}

// addWords adds the block's words: each of a short block's, or a long
// one's first; then its first 40 words and the pairs of them in a row.
func (f *featurizer) addWords() {
	fields := f.fields
	if f.words <= 6 {
		for _, w := range fields {
			w = strings.ToLower(strings.Trim(w, ".,:;!?()[]\"'«»“”‘’-–—|/"))
			if w != "" && utf8.RuneCountInString(w) <= 20 {
				f.add("tw", w)
			}
		}
	} else if len(fields) > 0 {
		f.add("tw1", strings.ToLower(fields[0]))
	}
	prev := ""
	for i, w := range fields {
		if i == 40 {
			break
		}
		w = normWord(w)
		if w == "" || utf8.RuneCountInString(w) > 20 {
			continue
		}
		f.add("bw", w)
		if prev != "" {
			f.add("bb", prev, w)
		}
		prev = w
	}
}

// element adds the features of a, d levels above the block (0: the block);
// seen lists the landmarks already counted above it.
func (f *featurizer) element(a *html.Node, d int, pt string, seen *[]string) {
	if d == 1 {
		f.add("p", a.Data)
	}
	if d == 2 {
		f.add("g", a.Data)
	}
	if d > 0 && landmarks[a.Data] && !slices.Contains(*seen, a.Data) {
		*seen = append(*seen, a.Data)
		f.add("in", a.Data)
		f.add("pt", pt, "in", a.Data)
	}
	if d >= 8 {
		return
	}
	if h := f.st.of(a).hint; h != 0 {
		for bit := 0; bit < 8; bit++ {
			if h&(1<<bit) != 0 {
				f.add("h", strconv.Itoa(bit), "d", bucket(float64(d), 1, 3))
			}
		}
	}
	if role := htmlnode.Attr(a, "role"); role != "" {
		f.add("role", strings.ToLower(role))
	}
	if d < 6 {
		f.classWords(a, d)
	}
	if d == 0 || d == 1 {
		f.add("sib", strconv.Itoa(d), bucket(float64(f.alikeSiblings(a)), 1, 2, 4, 8))
	}
	if d == 1 {
		f.add("pld", bucket(f.st.of(a).linkDensity(), 0.2, 0.5, 0.8))
	}
}

// above is the features of a block's ancestors from its parent up to the
// root, and its depth, kept per parent.
func (f *featurizer) above(parent *html.Node, pt string) []uint32 {
	if cached, ok := f.parents[parent]; ok {
		return cached
	}
	own := f.out
	f.out = make([]uint32, 0, 32)
	var seen []string // landmarks already counted; a handful at most
	d := 1
	for a := parent; a != nil && a.Type == html.ElementNode; a = a.Parent {
		f.element(a, d, pt, &seen)
		if a == f.root {
			break
		}
		d++
	}
	f.add("depth", bucket(float64(d), 4, 8, 12, 16, 24))
	feats := f.out
	f.out = own
	if f.parents == nil {
		f.parents = map[*html.Node][]uint32{}
	}
	f.parents[parent] = feats
	return feats
}

// classWords adds the words of a's class and id, split at punctuation and
// camel case, once as words anywhere above the block and once with their
// distance when near it.
func (f *featurizer) classWords(a *html.Node, d int) {
	nf := f.nameFeatures(a)
	for i, h := range nf.any {
		f.out = append(f.out, h)
		if d <= 2 {
			f.out = append(f.out, nf.near[d][i])
		}
	}
}

// nameFeats are the hashed features of an element's class and id words:
// any as the words of an ancestor, near[d] with their distance d.
type nameFeats struct {
	words []string
	any   []uint32
	near  [3][]uint32
}

// nameFeatures are the features of the first dozen words of a's class and
// id, split and hashed once per element: every block below an element
// reads them.
func (f *featurizer) nameFeatures(a *html.Node) *nameFeats {
	if nf, ok := f.names[a]; ok {
		return nf
	}
	// Elements without an id share their class's features: a page repeats
	// its class names from element to element.
	class, hasID := "", false
	for _, at := range a.Attr {
		switch at.Key {
		case "class":
			class = at.Val
		case "id":
			hasID = true
		}
	}
	if !hasID {
		if nf, ok := f.classes[class]; ok {
			if f.names == nil {
				f.names = map[*html.Node]*nameFeats{}
			}
			f.names[a] = nf
			return nf
		}
	}
	var words []string
	for _, at := range a.Attr {
		if at.Key == "class" || at.Key == "id" {
			words = append(words, splitName(at.Val)...)
		}
	}
	if len(words) > 12 {
		words = words[:12]
	}
	nf := &nameFeats{words: words}
	if len(words) > 0 {
		nf.any = make([]uint32, len(words))
		for i, w := range words {
			nf.any[i] = hashParts("c", w)
		}
		for d := range nf.near {
			nf.near[d] = make([]uint32, len(words))
			for i, w := range words {
				nf.near[d][i] = hashParts("c", strconv.Itoa(d), w)
			}
		}
	}
	if f.names == nil {
		f.names = map[*html.Node]*nameFeats{}
	}
	f.names[a] = nf
	if !hasID {
		if f.classes == nil {
			f.classes = map[string]*nameFeats{}
		}
		f.classes[class] = nf
	}
	return nf
}

// splitName splits a class or id value into lower-case words.
func splitName(v string) []string {
	var words []string
	start := -1
	prevLower := false
	flush := func(end int) {
		if start >= 0 && end-start >= 2 && end-start <= 24 {
			w := strings.ToLower(v[start:end])
			if strings.Trim(w, "0123456789") != "" {
				words = append(words, w)
			}
		}
		start = -1
	}
	for i, r := range v {
		letter := r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		if !letter {
			flush(i)
			prevLower = false
			continue
		}
		upper := r >= 'A' && r <= 'Z'
		if upper && prevLower {
			flush(i)
		}
		if start < 0 {
			start = i
		}
		prevLower = r >= 'a' && r <= 'z'
	}
	flush(len(v))
	return words
}

// longBlock is the word count from which a block is running text.
const longBlock = 25

// placeInContent adds to the features of the blocks still in content what
// only the rules' choice tells: where each sits in the content, whether
// before its title or its first running text or after its last, and how
// much of the content its region (the child of content it is in) holds.
// It returns the indexes of those blocks.
func placeInContent(content *html.Node, blocks []textBlock, page Page) []int {
	var in []int
	total := 0
	for i := range blocks {
		if htmlnode.Contains(content, blocks[i].n) {
			in = append(in, i)
			total += blocks[i].runes
		}
	}
	if len(in) == 0 {
		return nil
	}
	pt := string(page.Type)
	if pt == "" {
		pt = "other"
	}
	firstLong, lastLong, h1 := -1, -1, -1
	regions := map[*html.Node]int{}
	regionOf := make([]*html.Node, len(in))
	for k, i := range in {
		b := &blocks[i]
		if b.words >= longBlock {
			if firstLong < 0 {
				firstLong = k
			}
			lastLong = k
		}
		if b.isH1 && h1 < 0 {
			h1 = k
		}
		r := b.n
		for r.Parent != nil && r.Parent != content {
			r = r.Parent
		}
		regionOf[k] = r
		regions[r] += b.runes
	}
	add := func(b *textBlock, parts ...string) {
		b.feats = append(b.feats, hashParts(parts...))
	}
	regionBlocks := map[*html.Node]int{}
	for _, r := range regionOf {
		regionBlocks[r]++
	}
	cum := 0
	for k, i := range in {
		b := &blocks[i]
		add(b, "cpos", bucket(float64(cum)/float64(max(total, 1)), 0.05, 0.15, 0.3, 0.5, 0.7, 0.85, 0.95))
		cum += b.runes
		switch {
		case firstLong < 0:
			add(b, "nolong", pt)
		case k < firstLong:
			add(b, "head", pt, bucket(float64(firstLong-k), 2, 4, 8))
		case k > lastLong:
			add(b, "tail", pt, bucket(float64(k-lastLong), 2, 4, 8))
		default:
			add(b, "body", pt)
		}
		if h1 >= 0 {
			switch {
			case k < h1:
				add(b, "preh1", pt)
			case k == h1:
				add(b, "ish1")
			}
		}
		share := float64(regions[regionOf[k]]) / float64(max(total, 1))
		rs := bucket(share, 0.02, 0.05, 0.1, 0.2, 0.4, 0.7)
		add(b, "rshare", rs)
		add(b, "rshare", rs, pt)
		add(b, "rshare", rs, "w", bucket(float64(b.words), 3, 8, 25))
		add(b, "ctotal", bucket(float64(total), 500, 2000, 8000))
	}
	return in
}

// normWord is w lower-cased without the punctuation around it.
func normWord(w string) string {
	return strings.ToLower(strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }))
}

// titleWords are the words of the document's title.
func titleWords(doc *html.Node) map[string]bool {
	t := htmlnode.First(doc, "title")
	if t == nil {
		return nil
	}
	words := map[string]bool{}
	for _, w := range strings.Fields(htmlnode.Text(t)) {
		if w = normWord(w); len(w) > 1 {
			words[w] = true
		}
	}
	return words
}

// referenceWords name the lists of references and footnotes that
// citations point into.
var referenceWords = map[string]bool{
	"references": true, "reflist": true, "footnotes": true, "footnote": true,
	"citations": true, "bibliography": true, "endnotes": true,
}

// keeps reports whether block n stays whatever the model says: what a
// reader needs even where a benchmark's ground truth leaves it out. The
// headings that map the page, the dates and authors of posts (a block
// holding a <time>), a product's price, and the references citations
// point to.
func (f *featurizer) keeps(n *html.Node, page Page) bool {
	if isHeading(n) || htmlnode.Closest(n, "h1", "h2", "h3", "h4", "h5", "h6") != nil {
		return true
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && inlineTags[c.Data] && (c.Data == "time" || htmlnode.First(c, "time") != nil) {
			return true
		}
	}
	if page.Type == TypeProduct && hasPrice(f.text) {
		return true
	}
	d := 0
	for a := n; a != nil && a.Type == html.ElementNode && d < 6; a = a.Parent {
		for _, w := range f.nameFeatures(a).words {
			if referenceWords[w] {
				return true
			}
		}
		d++
	}
	return false
}

// fingerprintPage exercises every kind of feature, so that any change to
// how features are computed changes featureFingerprint.
const fingerprintPage = `<html><head><title>Trail Flask 600 | Shop</title></head><body>
<header class="siteHeader"><nav role="navigation"><ul><li><a href="/">Home</a></li><li><a href="/shop">Shop</a></li></ul></nav></header>
<main><article class="product-page"><h1>Trail Flask 600</h1><p>A steel flask, cold all day: it has a loop, a cap, and a cage mount.</p>
<div class="price">€24.00</div><p>Added <time>Jan 2</time> by <a href="/u/kim">kim</a></p>
<table><tr><td>Volume</td><td>600 ml</td></tr></table><section class="related"><ol class="references"><li>Ref 1.</li><li>Ref 2.</li></ol></section></article></main>
<footer id="footer">© 2025 Shop | <a href="/terms">Terms</a></footer></body></html>`

// featureFingerprint is a digest of the features of fingerprintPage. A
// model stores the one it was trained with; one trained on other features
// does not load.
var featureFingerprint = sync.OnceValue(func() uint32 { return fingerprintOf(TypeProduct) })

// fingerprintOf digests the features of fingerprintPage classified as t.
func fingerprintOf(t PageType) uint32 {
	doc, err := html.Parse(strings.NewReader(fingerprintPage))
	if err != nil {
		panic("readable: fingerprint page: " + err.Error())
	}
	body := htmlnode.First(doc, "body")
	st := measure(body)
	page := Page{Type: t}
	blocks := segment(body, st, page, titleWords(doc), false, nil)
	placeInContent(body, blocks, page)
	h := uint32(2166136261)
	for _, b := range blocks {
		for _, f := range b.feats {
			h = (h ^ f) * 16777619
		}
		if b.kept {
			h = (h ^ 1) * 16777619
		}
	}
	return h
}
