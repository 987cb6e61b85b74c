package output

import (
	"encoding/json"
	"fmt"
	"strings"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

type diffJSON struct {
	Changed      bool              `json:"changed"`
	Fields       []fieldChangeJSON `json:"fields"`
	Blocks       []blockChangeJSON `json:"blocks"`
	LinksAdded   []string          `json:"links_added"`
	LinksRemoved []string          `json:"links_removed"`
	Unified      string            `json:"unified"`
	Truncated    bool              `json:"truncated,omitempty"`
}

type fieldChangeJSON struct {
	Field string `json:"field"`
	Old   string `json:"old"`
	New   string `json:"new"`
}

type blockChangeJSON struct {
	Change      string   `json:"change"`
	HeadingPath []string `json:"heading_path"`
	Old         *string  `json:"old,omitempty"`
	New         *string  `json:"new,omitempty"`
}

func toDiffJSON(d *distillv1.PageDiff) *diffJSON {
	out := &diffJSON{
		Changed:      d.GetChanged(),
		Fields:       []fieldChangeJSON{},
		Blocks:       []blockChangeJSON{},
		LinksAdded:   nonNil(d.GetLinksAdded()),
		LinksRemoved: nonNil(d.GetLinksRemoved()),
		Unified:      d.GetUnified(),
		Truncated:    d.GetTruncated(),
	}
	for _, f := range d.GetFields() {
		out.Fields = append(out.Fields, fieldChangeJSON{Field: f.GetField(), Old: f.GetOld(), New: f.GetNew()})
	}
	for _, b := range d.GetBlocks() {
		out.Blocks = append(out.Blocks, blockChangeJSON{Change: b.GetChange(), HeadingPath: nonNil(b.GetHeadingPath()), Old: b.Old, New: b.New})
	}
	return out
}

// DiffText is a diff as people and models read it: "unchanged", or the
// fields and links that changed, a count of the blocks, and the unified
// diff of the Markdown.
func DiffText(d *distillv1.PageDiff) string {
	if !d.GetChanged() {
		return "unchanged"
	}
	var b strings.Builder
	for _, f := range d.GetFields() {
		fmt.Fprintf(&b, "%s: %q -> %q\n", f.GetField(), f.GetOld(), f.GetNew())
	}
	for _, u := range d.GetLinksAdded() {
		fmt.Fprintf(&b, "link added: %s\n", u)
	}
	for _, u := range d.GetLinksRemoved() {
		fmt.Fprintf(&b, "link removed: %s\n", u)
	}
	counts := map[string]int{}
	for _, c := range d.GetBlocks() {
		counts[c.GetChange()]++
	}
	if len(d.GetBlocks()) > 0 {
		fmt.Fprintf(&b, "blocks: %d changed, %d added, %d removed\n", counts["changed"], counts["added"], counts["removed"])
	}
	if d.GetTruncated() {
		b.WriteString("note: the pages are long; only their beginnings were compared\n")
	}
	if d.GetUnified() != "" {
		b.WriteString("\n" + d.GetUnified() + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// ReadDistilled reads a page back from its public JSON form, as
// `--format json` printed it: the parts a diff compares (URL, status,
// title, byline, excerpt, Markdown and links).
func ReadDistilled(b []byte) (*distillv1.Distilled, error) {
	var in distilledJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, fmt.Errorf("not a distill page in JSON (the output of --format json for one URL): %w", err)
	}
	if in.FinalURL == "" && in.Markdown == "" && in.Title == "" {
		return nil, fmt.Errorf("not a distill page in JSON: no final_url, title or markdown")
	}
	d := &distillv1.Distilled{FinalUrl: in.FinalURL, Status: in.Status, Title: in.Title, Byline: in.Byline, Excerpt: in.Excerpt, Markdown: in.Markdown}
	if in.Links != nil {
		d.Links = &distillv1.LinkList{}
		for _, l := range *in.Links {
			d.Links.Items = append(d.Links.Items, &distillv1.Link{Href: l.Href, Text: l.Text})
		}
	}
	return d, nil
}
