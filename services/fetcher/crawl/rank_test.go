package crawl

import (
	"slices"
	"strings"
	"testing"
)

func TestQueryWords(t *testing.T) {
	tests := []struct{ query, want string }{
		{"How do I change the retry timeout?", "chang retry timeout"},
		{"retries and timeouts", "retry timeout"},
		{"Configuring TLS certificates", "configur tls certificat"},
		{"the a of", ""},
		{"Déploiement façile", "déploiement façil"},
	}
	for _, tt := range tests {
		if got := strings.Join(queryWords(tt.query), " "); got != tt.want {
			t.Errorf("queryWords(%q) = %q, want %q", tt.query, got, tt.want)
		}
	}
}

func TestMatches(t *testing.T) {
	tests := []struct {
		word, query string
		want        bool
	}{
		{"retry", "retry", true},
		{"retrying", "retry", true},    // a word that begins with a long enough query word
		{"timeoutms", "timeout", true}, // run together in a path
		{"key", "keys", false},         // the query word is the longer
		{"api", "ap", false},           // too short to stand for a stem
		{"reset", "set", false},        // inside, not at the start
	}
	for _, tt := range tests {
		if got := matches(tt.word, tt.query); got != tt.want {
			t.Errorf("matches(%q, %q) = %v, want %v", tt.word, tt.query, got, tt.want)
		}
	}
}

func TestRelevance(t *testing.T) {
	r := newRanker("rotate api key")
	// Pages seen so far all say "api": it weighs less than the others.
	for range 5 {
		r.seen([]string{"api"})
	}
	rel := func(title, text string) float64 {
		tw, xw := words(title), words(text)
		return r.relevance(tw, xw, r.present(append(slices.Clone(tw), xw...)))
	}
	answer := rel("Rotating API keys", "To rotate a key, make a new key.")
	partial := rel("API overview", "The API takes a key in a header.")
	none := rel("Pricing", "Plans and prices.")
	if answer < 0.8 || answer > 1 {
		t.Errorf("the answer rates %v, want 0.8 to 1", answer)
	}
	if !(none == 0 && partial > none && partial < answer) {
		t.Errorf("ratings answer %v, partial %v, none %v: want none 0 < partial < answer", answer, partial, none)
	}
}

func TestLinkScores(t *testing.T) {
	r := newRanker("retry timeout")
	r.seen(nil)
	anchor := r.link("Retry timeouts", "/guides/networking/retry-timeouts", "", 0, nil)
	path := r.link("Notes 4", "/guides/retry-timeouts", "", 0, nil)
	context := r.link("Networking", "/guides/networking", "Connections, proxies, retry policies and their timeouts.", 0, nil)
	parent := r.link("Notes 1", "/guides/notes-1", "", 0.9, nil)
	nothing := r.link("Notes 1", "/guides/notes-1", "", 0, nil)
	for _, s := range []float64{anchor, path, context, parent, nothing} {
		if s < 0 || s > 1 {
			t.Fatalf("score %v outside 0..1", s)
		}
	}
	if !(anchor > path && path > context && context > nothing && parent > nothing) {
		t.Errorf("scores anchor %v, path %v, context %v, parent %v, nothing %v: want anchor > path > context > nothing, parent > nothing",
			anchor, path, context, parent, nothing)
	}
}

func TestContextOf(t *testing.T) {
	paras := paragraphs("# Guides\n\n[Networking](https://example.com/net): connections and retries.\n\nOther [storage](https://example.com/st) notes.")
	if got := contextOf(paras, "https://example.com/net", "Networking"); !strings.Contains(got, "connections and retries") {
		t.Errorf("markdown link context %q", got)
	}
	// Text output has no targets: the anchor text finds the paragraph.
	text := paragraphs("Guides\n\nNetworking: connections and retries.")
	if got := contextOf(text, "https://example.com/net", "Networking"); got != "Networking: connections and retries." {
		t.Errorf("text context %q", got)
	}
	long := paragraphs(strings.Repeat("word ", 400) + "[x](https://example.com/x)")
	if got := contextOf(long, "https://example.com/x", "x"); len(got) > maxContext {
		t.Errorf("context of %d characters, want at most %d", len(got), maxContext)
	}
}

func TestStopWhenAnswered(t *testing.T) {
	tests := []struct {
		name  string
		rels  []float64
		after int // pages after which it stops; -1 for never
	}{
		{"never answered", []float64{0.1, 0.7, 0.79, 0.5, 0.2, 0.3, 0.1, 0.1, 0.1, 0.1, 0.1}, -1},
		{"answered, then eight no higher", []float64{0.2, 0.9, 0.5, 0.5, 0.9, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}, 10},
		{"a better page starts the count again", []float64{0.85, 0.1, 0.1, 0.1, 0.95, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}, 13},
		{"seven are not enough", []float64{0.8, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a answered
			got := -1
			for i, r := range tt.rels {
				if a.page(r) {
					got = i + 1
					break
				}
			}
			if got != tt.after {
				t.Errorf("stopped after %d pages, want %d", got, tt.after)
			}
		})
	}
}
