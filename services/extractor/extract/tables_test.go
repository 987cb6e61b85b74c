package extract

import (
	"os"
	"testing"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// The tables themselves are tested in the tables package; these tests are
// about when extract reads them, from what, and what diagnostics count.

func tablesReq(body string, opts *distillv1.FetchOptions) *internalv1.ExtractRequest {
	if opts == nil {
		opts = &distillv1.FetchOptions{}
	}
	opts.ExtractTables = true
	return htmlReq(body, opts)
}

// TestTableCount runs the tables package's fixture, a page laid out with a
// table around data tables: diagnostics count the tables extracted.
func TestTableCount(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile("../tables/testdata/tables.html")
	if err != nil {
		t.Fatal(err)
	}
	d := run(t, tablesReq(string(page), &distillv1.FetchOptions{Profile: distillv1.Profile_PROFILE_FULL, Diagnostics: true}))
	if got, want := d.GetDiagnostics().GetTableCount(), int32(len(d.GetTables().GetItems())); got != want || got != 3 {
		t.Errorf("table_count = %d, want the %d extracted tables, 3", got, want)
	}
}

func TestTablesPresence(t *testing.T) {
	t.Parallel()
	const page = `<article><p>Results of the season, with every team that finished the league in the top half.</p>
<table><tr><th>Team</th><th>Won</th></tr><tr><td>Rovers</td><td>10</td></tr></table></article>
<aside><table><tr><th>Ad</th><th>Price</th></tr><tr><td>Flour</td><td>£2</td></tr></table></aside>`
	t.Run("not asked", func(t *testing.T) {
		t.Parallel()
		d := run(t, htmlReq(page, &distillv1.FetchOptions{Diagnostics: true}))
		if d.GetTables() != nil {
			t.Errorf("tables = %v, want nil", d.GetTables())
		}
		// Counted all the same: diagnostics describe the content.
		if n := d.GetDiagnostics().GetTableCount(); n != 1 {
			t.Errorf("table_count = %d, want 1", n)
		}
	})
	t.Run("asked, none", func(t *testing.T) {
		t.Parallel()
		d := run(t, tablesReq("<p>No tables.</p>", nil))
		if d.GetTables() == nil || len(d.GetTables().GetItems()) != 0 {
			t.Errorf("tables = %v, want an empty list", d.GetTables())
		}
	})
	t.Run("from the content only", func(t *testing.T) {
		t.Parallel()
		d := run(t, tablesReq(page, nil))
		items := d.GetTables().GetItems()
		if len(items) != 1 || items[0].GetHeaders()[0] != "Team" {
			t.Errorf("tables = %v, want the article's one", items)
		}
	})
}
