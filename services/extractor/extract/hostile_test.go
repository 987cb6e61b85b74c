package extract

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// everything asks for every part of the result, so hostile input goes
// through every code path.
func everything(profile distillv1.Profile) *distillv1.FetchOptions {
	return &distillv1.FetchOptions{
		Profile:         profile,
		Format:          distillv1.Format_FORMAT_TEXT,
		Stats:           true,
		Diagnostics:     true,
		ExtractLinks:    true,
		ExtractTables:   true,
		MaxOutputTokens: proto.Int64(5000),
	}
}

func TestHostileInput(t *testing.T) {
	const depth = 1_000_000
	nested := strings.Repeat("<div>", depth) + "deep text survives" + strings.Repeat("</div>", depth)

	var attrs strings.Builder
	attrs.WriteString("<html><body><div ")
	for i := 0; attrs.Len() < 4<<20; i++ {
		fmt.Fprintf(&attrs, `data-a%d="%d" class="c%d" `, i, i, i)
	}
	attrs.WriteString("><p>text after attributes</p></div></body></html>")

	var cells strings.Builder
	cells.WriteString("<table>")
	for range 2000 {
		cells.WriteString(`<tr><td colspan="1000000">x</td><td colspan="-5">y</td></tr>`)
	}
	cells.WriteString("</table>")

	tests := []struct {
		name string
		page string
		want string // text the result keeps
	}{
		{name: "a million nested divs", page: nested, want: "deep text survives"},
		{name: "nested inline and block", page: strings.Repeat("<span><div><b>", 100_000) + "inner words" + strings.Repeat("</b></div></span>", 100_000), want: "inner words"},
		{name: "self-closing divs", page: strings.Repeat("<div/>", 300_000) + "after self-closing", want: "after self-closing"},
		{name: "nested tables", page: strings.Repeat("<table><tr><td>", 50_000) + "cell text", want: "cell text"},
		{name: "four MiB of attributes", page: attrs.String(), want: "text after attributes"},
		{name: "huge colspans", page: cells.String()},
		{name: "unclosed formatting", page: strings.Repeat(`<b id="x"><i><a href="/a">`, 50_000) + "formatted", want: "formatted"},
		{name: "binary garbage as html", page: string([]byte{0x00, 0xff, 0xfe, '<', 0x80, '>', 0x1b})},
	}
	profiles := []distillv1.Profile{distillv1.Profile_PROFILE_ARTICLE, distillv1.Profile_PROFILE_FULL, distillv1.Profile_PROFILE_METADATA}
	for _, tt := range tests {
		for _, profile := range profiles {
			t.Run(tt.name+"/"+profile.String(), func(t *testing.T) {
				d := run(t, htmlReq(tt.page, everything(profile)))
				if tt.want != "" && profile != distillv1.Profile_PROFILE_METADATA && !strings.Contains(d.GetMarkdown(), tt.want) {
					t.Errorf("markdown lacks %q: %.200q", tt.want, d.GetMarkdown())
				}
			})
		}
	}
}

func TestHostileColspanBounded(t *testing.T) {
	page := `<table><tr><td colspan="1000000">x</td><td colspan="999">y</td></tr></table>`
	d := run(t, htmlReq(page, &distillv1.FetchOptions{ExtractTables: true}))
	items := d.GetTables().GetItems()
	if len(items) != 1 || len(items[0].GetRows()) != 1 {
		t.Fatalf("tables = %v", items)
	}
	if n := len(items[0].GetRows()[0].GetCells()); n != maxRowCells {
		t.Errorf("row has %d cells, want the cap of %d", n, maxRowCells)
	}
}
