package query

import (
	"strings"
	"testing"
)

const page = `# Rust

Rust is a general-purpose programming language emphasizing performance and memory safety.

## History

Software developer Graydon Hoare began Rust as a personal project in 2006 while working at Mozilla.

Mozilla officially sponsored the project in 2009.

## Syntax

| Keyword | Meaning |
| --- | --- |
| fn | declares a function |
| let | binds a variable |

` + "```rust\nfn main() {\n    let x = 5;\n}\n```" + `

## Ownership

Ownership rules decide when memory is freed: each value has one owner.`

func TestSelect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		question string
		present  []string
		absent   []string
		whole    bool
	}{
		{
			name:     "the answer under its headings",
			question: "Who began the language as a personal project?",
			present:  []string{"# Rust", "## History", "Graydon Hoare began Rust as a personal project"},
			absent:   []string{"## Syntax", "Ownership rules", "fn main"},
		},
		{
			name:     "a table answers",
			question: "what does the let keyword mean",
			present:  []string{"## Syntax", "| let | binds a variable |"},
			absent:   []string{"Graydon"},
		},
		{
			name:     "identifiers and stems meet",
			question: "when is memory freed by owners",
			present:  []string{"## Ownership", "each value has one owner"},
			absent:   []string{"Graydon"},
		},
		{
			name:     "nothing matches: the page whole",
			question: "What is the capital of Peru?",
			whole:    true,
		},
		{
			name:     "only stop words: the page whole",
			question: "who is it?",
			whole:    true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := Select(page, tt.question, 0)
			if tt.whole {
				if res.Markdown != page || res.Kept != 0 || res.Relevance != 0 {
					t.Errorf("kept %d blocks, relevance %v, want the page whole:\n%s", res.Kept, res.Relevance, res.Markdown)
				}
				return
			}
			for _, s := range tt.present {
				if !strings.Contains(res.Markdown, s) {
					t.Errorf("missing %q in:\n%s", s, res.Markdown)
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(res.Markdown, s) {
					t.Errorf("kept %q in:\n%s", s, res.Markdown)
				}
			}
			if res.Kept == 0 || res.Relevance <= 0 || res.Relevance > 1 {
				t.Errorf("kept %d, relevance %v", res.Kept, res.Relevance)
			}
		})
	}
}

func TestSelectKeepsToTheBudget(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 40 {
		b.WriteString("Tide pools hold anemones and crabs, paragraph " + strings.Repeat("x", i%3) + ".\n\n")
	}
	res := Select(b.String(), "tide pool anemones", 60)
	if res.Kept < 2 || res.Kept >= 40 {
		t.Fatalf("kept %d of 40 equal blocks in 60 tokens", res.Kept)
	}
}

func TestRelevanceOrdersPages(t *testing.T) {
	t.Parallel()
	q := "graydon hoare personal project"
	whole := Relevance("Graydon Hoare began Rust as a personal project.", q)
	part := Relevance("Hoare wrote code.\n\nA project began.", q)
	none := Relevance("Nothing about it here.", q)
	if !(whole > part && part > none && none == 0 && whole <= 1) {
		t.Errorf("relevance whole %v, part %v, none %v: want whole > part > none = 0", whole, part, none)
	}
	if whole < 0.85 {
		t.Errorf("a block holding the whole question in order scores %v, want 0.85 or more", whole)
	}
}
