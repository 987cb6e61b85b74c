// Package pagediff compares a page with an earlier answer for it: the
// page fields that changed, the Markdown's blocks added, removed and
// changed, the links that came and went, and a unified diff of the
// Markdown for a reader.
package pagediff

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/blocks"
)

// unifiedContext is the lines of context around each change of the
// unified diff: one keeps the diff short and still places the change.
const unifiedContext = 1

// maxBlocks and maxLines bound what is compared: matching is quadratic
// at worst, and a page past them is compared on its beginning.
const (
	maxBlocks = 5000
	maxLines  = 20000
)

// Compare returns what changed from old to cur.
func Compare(old, cur *distillv1.Distilled) *distillv1.PageDiff {
	d := &distillv1.PageDiff{}
	// An earlier answer with no URL is bare Markdown: it says nothing of
	// the page's fields, so they are not compared.
	bare := old.GetFinalUrl() == ""
	field := func(name, a, b string) {
		if a != b && !bare {
			d.Fields = append(d.Fields, &distillv1.FieldChange{Field: name, Old: a, New: b})
		}
	}
	field("title", old.GetTitle(), cur.GetTitle())
	field("byline", old.GetByline(), cur.GetByline())
	field("excerpt", old.GetExcerpt(), cur.GetExcerpt())
	field("final_url", old.GetFinalUrl(), cur.GetFinalUrl())
	if old.GetStatus() != 0 && cur.GetStatus() != 0 {
		field("status", strconv.Itoa(int(old.GetStatus())), strconv.Itoa(int(cur.GetStatus())))
	}

	oldBlocks, curBlocks := blocks.Parse(old.GetMarkdown()), blocks.Parse(cur.GetMarkdown())
	if len(oldBlocks) > maxBlocks || len(curBlocks) > maxBlocks {
		d.Truncated = true
		oldBlocks, curBlocks = oldBlocks[:min(len(oldBlocks), maxBlocks)], curBlocks[:min(len(curBlocks), maxBlocks)]
	}
	d.Blocks = compareBlocks(oldBlocks, curBlocks)
	d.LinksAdded, d.LinksRemoved = compareLinks(links(old), links(cur))
	d.Changed = len(d.Fields) > 0 || len(d.Blocks) > 0 || len(d.LinksAdded) > 0 || len(d.LinksRemoved) > 0
	if len(d.Blocks) > 0 {
		d.Unified = unified(old, cur)
	}
	return d
}

// compareBlocks matches the two lists of blocks by their text. Of a run
// replaced by another, blocks of the same kind pair up in order as
// changed; the rest are removed or added.
func compareBlocks(a, b []blocks.Block) []*distillv1.BlockChange {
	at, bt := texts(a), texts(b)
	m := difflib.NewMatcher(at, bt)
	var out []*distillv1.BlockChange
	removed := func(x blocks.Block) {
		out = append(out, &distillv1.BlockChange{Change: "removed", HeadingPath: x.Path, Old: &x.Text})
	}
	added := func(y blocks.Block) {
		out = append(out, &distillv1.BlockChange{Change: "added", HeadingPath: y.Path, New: &y.Text})
	}
	for _, op := range m.GetOpCodes() {
		switch op.Tag {
		case 'd':
			for _, x := range a[op.I1:op.I2] {
				removed(x)
			}
		case 'i':
			for _, y := range b[op.J1:op.J2] {
				added(y)
			}
		case 'r':
			i, j := op.I1, op.J1
			for i < op.I2 && j < op.J2 {
				x, y := a[i], b[j]
				switch {
				case x.Kind == y.Kind:
					out = append(out, &distillv1.BlockChange{Change: "changed", HeadingPath: y.Path, Old: &x.Text, New: &y.Text})
					i++
					j++
				case op.I2-i >= op.J2-j:
					removed(x)
					i++
				default:
					added(y)
					j++
				}
			}
			for ; i < op.I2; i++ {
				removed(a[i])
			}
			for ; j < op.J2; j++ {
				added(b[j])
			}
		}
	}
	return out
}

func texts(bs []blocks.Block) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Text
	}
	return out
}

// linkURL matches the URL of an inline Markdown link or image.
var linkURL = regexp.MustCompile(`\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)`)

// links returns the link URLs of a page: those of its Markdown, outside
// code, and of its links list when it has one.
func links(d *distillv1.Distilled) []string {
	var out []string
	for _, b := range blocks.Parse(d.GetMarkdown()) {
		if b.Kind == blocks.Code {
			continue
		}
		for _, m := range linkURL.FindAllStringSubmatch(b.Text, -1) {
			out = append(out, m[1])
		}
	}
	for _, l := range d.GetLinks().GetItems() {
		out = append(out, l.GetHref())
	}
	return out
}

// compareLinks returns the URLs of b that a lacks and of a that b lacks,
// each once, in the order they first appear.
func compareLinks(a, b []string) (added, removed []string) {
	inA, inB := set(a), set(b)
	seen := map[string]bool{}
	for _, u := range b {
		if !inA[u] && !seen[u] {
			seen[u] = true
			added = append(added, u)
		}
	}
	for _, u := range a {
		if !inB[u] && !seen[u] {
			seen[u] = true
			removed = append(removed, u)
		}
	}
	return added, removed
}

func set(list []string) map[string]bool {
	m := make(map[string]bool, len(list))
	for _, s := range list {
		m[s] = true
	}
	return m
}

func unified(old, cur *distillv1.Distilled) string {
	from, to := old.GetFinalUrl(), cur.GetFinalUrl()
	if from == "" {
		from = "before"
	}
	if to == "" {
		to = "now"
	}
	a, b := difflib.SplitLines(ensureNewline(old.GetMarkdown())), difflib.SplitLines(ensureNewline(cur.GetMarkdown()))
	a, b = a[:min(len(a), maxLines)], b[:min(len(b), maxLines)]
	text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A:        a,
		B:        b,
		FromFile: from + " (before)",
		ToFile:   to + " (now)",
		Context:  unifiedContext,
	})
	if err != nil {
		// Writing to a string cannot fail; an empty diff says nothing
		// wrong.
		return ""
	}
	return strings.TrimRight(text, "\n")
}

func ensureNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}
