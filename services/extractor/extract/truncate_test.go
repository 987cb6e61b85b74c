package extract

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/markdown"
	"distill.dev/services/extractor/tokens"
)

func TestTruncate(t *testing.T) {
	t.Parallel()
	const (
		paragraphs = "First paragraph here.\n\nSecond paragraph here.\n\nThird paragraph here."
		list       = "Shopping list:\n\n- apples and pears\n- bread\n- milk\n- a very long item that goes on and on for many words"
		heading    = "Intro paragraph.\n\n## Details\n\nThe details paragraph runs on for a good many words before it ends here."
		table      = "| Name | Age |\n| --- | --- |\n| Ann | 31 |\n| Bob | 42 |\n| Cy | 27 |"
		code       = "Run this:\n\n```go\nfmt.Println(1)\nfmt.Println(2)\nfmt.Println(3)\n```\n\nDone."
		long       = "One single paragraph that keeps going with plenty of words so that no block fits in the budget at all."
		lines      = "First line of text\nSecond line of text\n\nNext paragraph"
	)
	tests := []struct {
		name   string
		in     string
		budget int64
		text   bool // plain text rather than Markdown
		want   string
	}{
		{name: "fits exactly", in: paragraphs, budget: 12, want: paragraphs},
		{name: "no budget", in: paragraphs, budget: 0, want: paragraphs},
		{name: "between paragraphs", in: paragraphs, budget: 8, want: "First paragraph here.\n\n[… truncated]"},
		{name: "between list items", in: list, budget: 18, want: "Shopping list:\n\n- apples and pears\n- bread\n- milk\n\n[… truncated]"},
		{
			name: "at the last whole item, even when words of the next would fit", in: list, budget: 22,
			want: "Shopping list:\n\n- apples and pears\n- bread\n- milk\n\n[… truncated]",
		},
		{name: "not after a heading", in: heading, budget: 10, want: "Intro paragraph.\n\n[… truncated]"},
		{
			name: "a heading never ends the output", in: heading, budget: 14,
			want: "Intro paragraph.\n\n[… truncated]",
		},
		{name: "between table rows", in: table, budget: 20, want: "| Name | Age |\n| --- | --- |\n| Ann | 31 |\n\n[… truncated]"},
		{name: "never a table's header alone", in: table, budget: 14, want: "[… truncated]"},
		{name: "not after a fence opening", in: code, budget: 14, want: "Run this:\n\n[… truncated]"},
		{name: "an open fence is closed", in: code, budget: 24, want: "Run this:\n\n```go\nfmt.Println(1)\nfmt.Println(2)\n```\n\n[… truncated]"},
		{name: "one block too long cut between words", in: long, budget: 10, want: "One single paragraph that keeps going\n\n[… truncated]"},
		{name: "full marker from four times its size", in: long + "\n\n" + long + "\n\n" + long, budget: 40, want: long + "\n\n[… truncated: output exceeded 40 tokens]"},
		{name: "marker alone", in: long, budget: 3, want: "[… truncated]"},
		{name: "ellipsis under three tokens", in: long, budget: 2, want: "…"},
		{name: "text between lines", in: lines, budget: 9, text: true, want: "First line of text\n\n[… truncated]"},
		{name: "text keeps markdown-like lines as text", in: "# not a heading\n\n" + table, budget: 9, text: true, want: "# not a heading\n\n[… truncated]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, cut := truncate(tt.in, tt.budget, !tt.text)
			if got != tt.want {
				t.Errorf("truncate(%d) =\n%q\nwant\n%q", tt.budget, got, tt.want)
			}
			if cut != (got != tt.in) {
				t.Errorf("cut = %v", cut)
			}
			if n := tokens.Count(got); tt.budget > 0 && n > tt.budget {
				t.Errorf("%d tokens, over the budget of %d", n, tt.budget)
			}
		})
	}
}

// truncationMarker returns the marker a truncated output ends with, or "".
func truncationMarker(out string) string {
	last := out[strings.LastIndexByte(out, '\n')+1:]
	switch {
	case last == "…", last == "[… truncated]",
		strings.HasPrefix(last, "[… truncated: output exceeded ") && strings.HasSuffix(last, " tokens]"):
		return last
	}
	return ""
}

// checkTruncated checks a truncated output against the full one it came
// from: within budget, marked, a prefix of the full output cut between
// words, and with every fence closed.
func checkTruncated(t *testing.T, full, out string, budget int64, md bool) {
	t.Helper()
	if n := tokens.Count(out); n > budget {
		t.Fatalf("budget %d: %d tokens", budget, n)
	}
	marker := truncationMarker(out)
	if marker == "" {
		t.Fatalf("budget %d: no marker at the end of %q", budget, out[max(0, len(out)-80):])
	}
	content := strings.TrimSuffix(strings.TrimSuffix(out, marker), "\n\n")
	if md {
		if f := markdown.OpenFence(content); f != "" {
			t.Fatalf("budget %d: fence %q left open", budget, f)
		}
		// A closing fence the cut added is not in the full output.
		if i := strings.LastIndexByte(content, '\n'); i >= 0 && !strings.HasPrefix(full, content) && markdown.OpenFence(content[:i]) != "" {
			content = content[:i]
		}
	}
	if !strings.HasPrefix(full, content) {
		t.Fatalf("budget %d: %q... is not a prefix of the full output", budget, content[max(0, len(content)-80):])
	}
	if rest := full[len(content):]; content != "" {
		r, _ := utf8.DecodeRuneInString(rest)
		l, _ := utf8.DecodeLastRuneInString(content)
		if !unicode.IsSpace(r) && !unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) && !unicode.In(l, unicode.Han, unicode.Hiragana, unicode.Katakana) {
			t.Fatalf("budget %d: cut mid-word: ...%q | %q...", budget, content[max(0, len(content)-30):], rest[:min(30, len(rest))])
		}
	}
}

func TestTruncateFixturesWithinBudget(t *testing.T) {
	t.Parallel()
	pages := []string{"blog.html", "docs.html", "lazy.html"}
	for _, name := range pages {
		for _, profile := range []distillv1.Profile{distillv1.Profile_PROFILE_ARTICLE, distillv1.Profile_PROFILE_FULL} {
			t.Run(name+"/"+profile.String(), func(t *testing.T) {
				t.Parallel()
				d := run(t, &internalv1.ExtractRequest{
					Html: readPage(t, name), Url: "https://example.com/page",
					Options: &distillv1.FetchOptions{Profile: profile, Format: distillv1.Format_FORMAT_TEXT},
				})
				for _, out := range []struct {
					full string
					md   bool
				}{{d.GetMarkdown(), true}, {d.GetText(), false}} {
					total := tokens.Count(out.full)
					if total < 100 {
						t.Fatalf("only %d tokens of output", total)
					}
					for budget := int64(1); budget < total+5; budget += 3 {
						got, cut := truncate(out.full, budget, out.md)
						if budget >= total {
							if cut || got != out.full {
								t.Fatalf("budget %d of %d: cut", budget, total)
							}
							continue
						}
						if !cut {
							t.Fatalf("budget %d of %d: not cut", budget, total)
						}
						checkTruncated(t, out.full, got, budget, out.md)
					}
				}
			})
		}
	}
}

func TestTruncationThroughExtract(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("<article><h1>Long</h1>")
	for range 60 {
		b.WriteString("<p>Paragraph of steady prose that keeps going so the budget is certain to run out before the end of the page.</p>")
	}
	b.WriteString("<pre><code class=\"language-go\">")
	for i := range 200 {
		b.WriteString("value := compute(input, " + strings.Repeat("x", i%7) + ")\n")
	}
	b.WriteString("</code></pre></article>")
	page := b.String()
	full := run(t, htmlReq(page, &distillv1.FetchOptions{Format: distillv1.Format_FORMAT_TEXT}))

	tests := []struct {
		name    string
		budget  int64
		wantCut bool
	}{
		{name: "small budget", budget: 50, wantCut: true},
		{name: "mid budget", budget: 700, wantCut: true},
		{name: "into the code block", budget: tokens.Count(full.GetMarkdown()) - 300, wantCut: true},
		{name: "budget larger than page", budget: 100000},
		{name: "no budget", budget: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := run(t, htmlReq(page, &distillv1.FetchOptions{
				MaxOutputTokens: proto.Int64(tt.budget),
				Diagnostics:     true,
				Format:          distillv1.Format_FORMAT_TEXT,
			}))
			md, diag := d.GetMarkdown(), d.GetDiagnostics()
			if diag.GetTruncated() != tt.wantCut {
				t.Errorf("truncated = %v, want %v", diag.GetTruncated(), tt.wantCut)
			}
			if diag.GetOutputTokens() != tokens.Count(md) {
				t.Errorf("output_tokens = %d, markdown has %d", diag.GetOutputTokens(), tokens.Count(md))
			}
			if !tt.wantCut {
				if md != full.GetMarkdown() || d.GetText() != full.GetText() {
					t.Error("output changed under a budget it fits")
				}
				if truncationMarker(md) != "" {
					t.Error("marker without a cut")
				}
				return
			}
			checkTruncated(t, full.GetMarkdown(), md, tt.budget, true)
			checkTruncated(t, full.GetText(), d.GetText(), tt.budget, false)
		})
	}
}
