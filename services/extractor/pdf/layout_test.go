package pdf

import (
	"strings"
	"testing"
)

// words lays text out as one run per line, size points high, from top at
// left x, one line every 1.3 sizes.
func words(x, top, size float64, bold bool, lines ...string) []run {
	var out []run
	for i, l := range lines {
		y := top + float64(i)*size*1.3
		out = append(out, run{text: l, x0: x, x1: x + float64(len(l))*size*0.5, y0: y, y1: y + size, size: size, bold: bold})
	}
	return out
}

func lay(pages ...[]run) string {
	var blocks []block
	for i, runs := range pages {
		bs, _ := pageBlocks(page{width: 600, height: 800, runs: runs}, i+1)
		blocks = append(blocks, bs...)
	}
	return layout(blocks, len(pages)).md
}

func TestLayout(t *testing.T) {
	tests := []struct {
		name  string
		pages [][]run
		want  string
	}{
		{
			name: "hyphenated line ends are joined",
			pages: [][]run{words(50, 100, 10, false,
				"the measure-", "ments were taken", "on a well-", "Known day")},
			want: "the measurements were taken on a well- Known day",
		},
		{
			name: "scripts without spaces join without one",
			pages: [][]run{words(50, 100, 10, false,
				"日本語の文章は", "空白なしで続く")},
			want: "日本語の文章は空白なしで続く",
		},
		{
			name:  "markdown-looking text is escaped",
			pages: [][]run{append(words(50, 100, 10, false, "# not a heading"), words(50, 200, 10, false, "1. not a list")...)},
			want:  "\\# not a heading\n\n1\\. not a list",
		},
		{
			name: "two columns under a spanning title, written right first",
			pages: [][]run{append(append(
				words(50, 50, 18, false, "A Title That Runs Across Both Columns"),
				words(320, 100, 10, false, "right one", "right two", "right three", "right four")...),
				words(50, 100, 10, false, "left one", "left two", "left three", "left four")...)},
			want: "# A Title That Runs Across Both Columns\n\nleft one left two left three left four\n\nright one right two right three right four",
		},
		{
			name: "bold at body size is a lower heading than a larger one",
			pages: [][]run{append(append(append(
				words(50, 50, 16, false, "Big"),
				words(50, 90, 10, true, "Bold Part")...),
				words(50, 120, 10, false, "body text that is long enough to be the body", "of the page and more")...),
				words(50, 160, 10, false, "another paragraph of body text")...)},
			want: "# Big\n\n## Bold Part\n\nbody text that is long enough to be the body of the page and more\n\nanother paragraph of body text",
		},
		{
			name: "one column with short lines on the right stays one column",
			pages: [][]run{append(append(
				words(450, 40, 10, false, "2 May 2026", "Harbour", "Office"),
				words(50, 100, 10, false,
					"a long line of body text that runs all the way across the page from the left margin",
					"to the right one, and then another of the same length follows it down the page so that",
					"the page is plainly one column of text and nothing else at all, just as a letter is")...),
				words(50, 160, 10, false, "short last line")...)},
			want: "2 May 2026 Harbour Office\n\na long line of body text that runs all the way across the page from the left margin to the right one, and then another of the same length follows it down the page so that the page is plainly one column of text and nothing else at all, just as a letter is\n\nshort last line",
		},
		{
			name:  "one page without headings has no page section",
			pages: [][]run{words(50, 100, 10, false, "just text")},
			want:  "just text",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lay(tt.pages...); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestLayoutOfNothing(t *testing.T) {
	if got := lay(nil, nil); strings.TrimSpace(got) != "" {
		t.Errorf("empty pages gave %q", got)
	}
}
