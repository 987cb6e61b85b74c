package tables

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"google.golang.org/protobuf/proto"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/internal/golden"
)

// read parses page and reads its tables.
func read(t *testing.T, page string) []*distillv1.Table {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	return Read(doc)
}

func row(cells ...string) *distillv1.TableRow { return &distillv1.TableRow{Cells: cells} }

// TestGolden reads a page laid out with a table around data tables; the
// golden file is the reviewed data.
func TestGolden(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile(filepath.Join("testdata", "tables.html"))
	if err != nil {
		t.Fatal(err)
	}
	got := read(t, string(page))
	golden.Check(t, "tables.json", golden.ProtoJSON(t, &distillv1.TableList{Items: got}))
	if len(got) != 3 {
		t.Errorf("%d tables, want 3", len(got))
	}
}

func TestRead(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		page string
		want []*distillv1.Table
	}{
		{
			name: "thead, tbody and colspan repeated",
			page: `<table>
<thead><tr><th>Team</th><th>Won</th><th>Lost</th></tr></thead>
<tbody><tr><td>Rovers</td><td>10</td><td>2</td></tr><tr><td colspan="3">Season <b>abandoned</b></td></tr></tbody>
</table>`,
			want: []*distillv1.Table{{
				Headers: []string{"Team", "Won", "Lost"},
				Rows:    []*distillv1.TableRow{row("Rovers", "10", "2"), row("Season abandoned", "Season abandoned", "Season abandoned")},
			}},
		},
		{
			name: "rowspan and colspan on one grid",
			page: `<table><tr><th>A</th><th>B</th><th>C</th><th>D</th></tr>
<tr><td rowspan="3">a</td><td colspan="2" rowspan="2">bc</td><td>d1</td></tr>
<tr><td>d2</td></tr>
<tr><td>b3</td><td>c3</td><td rowspan="5">d3</td></tr>
<tr><td>a4</td><td>b4</td></tr>
</table>`,
			want: []*distillv1.Table{{
				Headers: []string{"A", "B", "C", "D"},
				Rows: []*distillv1.TableRow{
					row("a", "bc", "bc", "d1"),
					row("a", "bc", "bc", "d2"),
					row("a", "b3", "c3", "d3"),
					row("a4", "b4", "", "d3"),
				},
			}},
		},
		{
			name: "short rows padded, a ragged row widens the table",
			page: `<table><tr><th>K</th><th>V</th></tr><tr><td>a</td></tr><tr><td>b</td><td>2</td><td>extra</td></tr></table>`,
			want: []*distillv1.Table{{
				Headers: []string{"K", "V", ""},
				Rows:    []*distillv1.TableRow{row("a", "", ""), row("b", "2", "extra")},
			}},
		},
		{
			name: "rowspan 0 reaches the end of its group and no further",
			page: `<table><thead><tr><th>Group</th><th>Item</th></tr></thead>
<tbody><tr><td rowspan="0">one</td><td>1</td></tr><tr><td>2</td></tr></tbody>
<tbody><tr><td>two</td><td>3</td></tr></tbody></table>`,
			want: []*distillv1.Table{{
				Headers: []string{"Group", "Item"},
				Rows:    []*distillv1.TableRow{row("one", "1"), row("one", "2"), row("two", "3")},
			}},
		},
		{
			name: "stacked thead rows joined per column",
			page: `<table><thead>
<tr><th rowspan="2">Name</th><th colspan="2">Score</th><th></th></tr>
<tr><th>Home</th><th>Away</th><th>Notes</th></tr>
</thead><tbody><tr><td>Rovers</td><td>2</td><td>1</td><td>-</td></tr></tbody></table>`,
			want: []*distillv1.Table{{
				Headers: []string{"Name", "Score / Home", "Score / Away", "Notes"},
				Rows:    []*distillv1.TableRow{row("Rovers", "2", "1", "-")},
			}},
		},
		{
			name: "leading rows of only th are headers, later ones are data",
			page: `<table><tr><th colspan="2">Size</th></tr><tr><th>W</th><th>H</th></tr><tr><td>1</td><td>2</td></tr><tr><th>Total</th><td>3</td></tr><tr><th>X</th><th>Y</th></tr></table>`,
			want: []*distillv1.Table{{
				Headers: []string{"Size / W", "Size / H"},
				Rows:    []*distillv1.TableRow{row("1", "2"), row("Total", "3"), row("X", "Y")},
			}},
		},
		{
			name: "a table of only th has one header row",
			page: `<table><tr><th>a</th><th>b</th></tr><tr><th>c</th><th>d</th></tr></table>`,
			want: []*distillv1.Table{{
				Headers: []string{"a", "b"},
				Rows:    []*distillv1.TableRow{row("c", "d")},
			}},
		},
		{
			name: "no header row",
			page: `<table><tr><td>Depth</td><td>4 m</td></tr><tr><td>Length</td><td>12 m</td></tr></table>`,
			want: []*distillv1.Table{{Rows: []*distillv1.TableRow{row("Depth", "4 m"), row("Length", "12 m")}}},
		},
		{
			name: "empty header cells are no header",
			page: `<table><thead><tr><th></th><th> </th></tr></thead><tr><td>a</td><td>b</td></tr></table>`,
			want: []*distillv1.Table{{Rows: []*distillv1.TableRow{row("a", "b")}}},
		},
		{
			name: "caption",
			page: `<table><caption> Levels <em>today</em> </caption><tr><td>Avon</td><td>4.2 m</td></tr></table>`,
			want: []*distillv1.Table{{Caption: proto.String("Levels today"), Rows: []*distillv1.TableRow{row("Avon", "4.2 m")}}},
		},
		{
			name: "tfoot drawn last, extra thead is a body",
			page: `<table><thead><tr><th>Item</th><th>Cost</th></tr></thead><tfoot><tr><td>Total</td><td>3</td></tr></tfoot>
<tbody><tr><td>a</td><td>1</td></tr></tbody><thead><tr><th>b</th><th>2</th></tr></thead></table>`,
			want: []*distillv1.Table{{
				Headers: []string{"Item", "Cost"},
				Rows:    []*distillv1.TableRow{row("a", "1"), row("b", "2"), row("Total", "3")},
			}},
		},
		{
			name: "cell text: blocks and breaks separate words, nested tables stay out",
			page: `<table><tr><th>K</th><th>V</th></tr><tr><td><p>one</p>two<br>three</td><td>x<table><tr><td>in</td><td>ner</td></tr></table>y</td></tr></table>`,
			want: []*distillv1.Table{
				{Headers: []string{"K", "V"}, Rows: []*distillv1.TableRow{row("one two three", "x y")}},
				{Rows: []*distillv1.TableRow{row("in", "ner")}},
			},
		},
		{
			name: "layout tables left out",
			page: `<table role="presentation"><tr><td>a</td><td>b</td></tr></table>
<table role="none"><tr><th>a</th><th>b</th></tr></table>
<table><tr><td>A single cell</td></tr></table>
<table><tr><td colspan="4">A single wide cell</td></tr></table>
<table><tr><th>Only</th></tr><tr><td>one</td></tr><tr><td>column</td></tr></table>
<table></table>
<table><tr><td><div>sidebar</div></td><td><p>Main text of the page.</p></td></tr></table>
<table><tr><td>Name</td><td><input name="n"></td></tr><tr><td>Mail</td><td>x</td></tr></table>
<table><tr><td>` + strings.Repeat("long prose ", 30) + `</td><td>` + strings.Repeat("more prose ", 30) + `</td></tr></table>`,
			want: nil,
		},
		{
			name: "a layout table's data tables are kept",
			page: `<table><tr><td>menu</td><td><table><tr><th>Q</th><th>A</th></tr><tr><td>1</td><td>2</td></tr></table></td></tr></table>`,
			want: []*distillv1.Table{{Headers: []string{"Q", "A"}, Rows: []*distillv1.TableRow{row("1", "2")}}},
		},
		{
			name: "marked headers or a caption keep block content as data",
			page: `<table><tr><th>Step</th><th>What</th></tr><tr><td>1</td><td><p>Mix.</p></td></tr></table>
<table><caption>Notes</caption><tr><td><p>a</p></td><td><p>b</p></td></tr></table>
<table><tr><td>Short</td><td>Values</td></tr><tr><td>x</td><td><p>one block</p></td></tr></table>`,
			want: []*distillv1.Table{
				{Headers: []string{"Step", "What"}, Rows: []*distillv1.TableRow{row("1", "Mix.")}},
				{Caption: proto.String("Notes"), Rows: []*distillv1.TableRow{row("a", "b")}},
				{Rows: []*distillv1.TableRow{row("Short", "Values"), row("x", "one block")}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := read(t, tt.page)
			if got == nil {
				t.Fatal("tables = nil, want a list")
			}
			if !proto.Equal(&distillv1.TableList{Items: got}, &distillv1.TableList{Items: tt.want}) {
				t.Errorf("tables =\n%s\nwant\n%s", golden.ProtoJSON(t, &distillv1.TableList{Items: got}), golden.ProtoJSON(t, &distillv1.TableList{Items: tt.want}))
			}
		})
	}
}

func TestBounded(t *testing.T) {
	t.Parallel()
	wide := `<table><tr><td colspan="1000000">x</td><td colspan="999">y</td></tr><tr><td>a</td><td>b</td></tr></table>`
	tall := `<table><tr><th>A</th><th>B</th></tr><tr><td rowspan="1000000">a</td><td>1</td></tr>` + strings.Repeat(`<tr><td>b</td></tr>`, 1500) + `</table>`
	var huge strings.Builder
	huge.WriteString(`<table><tr><th>H</th><th>I</th></tr>`)
	for range 500 {
		huge.WriteString(`<tr><td colspan="1000">x</td></tr>`)
	}
	huge.WriteString(`</table>`)

	tests := []struct {
		name  string
		page  string
		width int
		rows  int
		check func(rows []*distillv1.TableRow) string
	}{
		{
			name: "colspan capped", page: wide, width: maxRowCells, rows: 2,
			check: func(rows []*distillv1.TableRow) string {
				if c := rows[0].GetCells(); c[maxRowCells-1] != "x" {
					return "the spanning cell does not fill the row: " + c[maxRowCells-1]
				}
				return ""
			},
		},
		{
			name: "rowspan capped", page: tall, width: 2, rows: 1501,
			check: func(rows []*distillv1.TableRow) string {
				carried := 0
				for _, r := range rows {
					if r.GetCells()[0] == "a" {
						carried++
					}
				}
				if carried != maxRowspan {
					return fmt.Sprintf("the rowspan covers %d rows, want %d", carried, maxRowspan)
				}
				return ""
			},
		},
		{name: "cells capped", page: huge.String(), width: maxRowCells, rows: maxTableCells/maxRowCells - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			items := read(t, tt.page)
			if len(items) != 1 {
				t.Fatalf("got %d tables", len(items))
			}
			rows := items[0].GetRows()
			if len(rows) != tt.rows {
				t.Fatalf("got %d rows, want %d", len(rows), tt.rows)
			}
			for i, r := range rows {
				if len(r.GetCells()) != tt.width {
					t.Fatalf("row %d has %d cells, want %d", i, len(r.GetCells()), tt.width)
				}
			}
			if h := items[0].GetHeaders(); h != nil && len(h) != tt.width {
				t.Errorf("%d headers, want %d", len(h), tt.width)
			}
			if tt.check != nil {
				if msg := tt.check(rows); msg != "" {
					t.Error(msg)
				}
			}
		})
	}
}

func TestColspanBounded(t *testing.T) {
	t.Parallel()
	page := `<table><tr><td colspan="1000000">x</td><td colspan="999">y</td></tr></table>`
	items := read(t, page)
	if len(items) != 1 || len(items[0].GetRows()) != 1 {
		t.Fatalf("tables = %v", items)
	}
	if n := len(items[0].GetRows()[0].GetCells()); n != maxRowCells {
		t.Errorf("row has %d cells, want the cap of %d", n, maxRowCells)
	}
}
