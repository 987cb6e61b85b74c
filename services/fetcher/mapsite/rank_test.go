package mapsite

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"distill.dev/services/fetcher/siteurl"
)

func TestRank(t *testing.T) {
	urls := []string{
		"https://example.com/",
		"https://example.com/blog/installation-notes",
		"https://example.com/docs/install",
		"https://example.com/docs/api/install",
		"https://example.com/docs/proxy",
		"https://example.com/docs/configure-proxy",
	}
	tests := []struct {
		name, query string
		want        []int // indexes into urls
	}{
		{"no query words keeps the order", "how to", []int{0, 1, 2, 3, 4, 5}},
		{"whole words before parts", "install", []int{2, 3, 1, 0, 4, 5}},
		{"rare word weighs more", "install proxy", []int{4, 5, 2, 3, 1, 0}},
		{"case and punctuation", "PROXY?!", []int{4, 5, 0, 1, 2, 3}},
		{"no match keeps the order", "kubernetes", []int{0, 1, 2, 3, 4, 5}},
		{"stop words ignored", "what is the api", []int{3, 0, 1, 2, 4, 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want []string
			for _, i := range tt.want {
				want = append(want, urls[i])
			}
			if got := Rank(slices.Clone(urls), tt.query); !slices.Equal(got, want) {
				t.Errorf("Rank(%q)\n got %q\nwant %q", tt.query, got, want)
			}
		})
	}
}

func TestGuesses(t *testing.T) {
	tests := []struct{ start, want string }{
		{"https://example.com/", "https://example.com/sitemap.xml https://example.com/sitemap_index.xml"},
		{"https://example.com/docs/intro", "https://example.com/docs/sitemap.xml https://example.com/sitemap.xml https://example.com/sitemap_index.xml"},
		{"https://example.com/docs/", "https://example.com/docs/sitemap.xml https://example.com/sitemap.xml https://example.com/sitemap_index.xml"},
		{"https://example.com/page", "https://example.com/sitemap.xml https://example.com/sitemap_index.xml"},
	}
	for _, tt := range tests {
		r := &run{start: mustCanonical(t, tt.start)}
		if got := joined(r.guesses()); got != tt.want {
			t.Errorf("guesses from %s = %s, want %s", tt.start, got, tt.want)
		}
	}
}

func mustCanonical(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := siteurl.Canonical(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func joined(s []string) string { return strings.Join(s, " ") }

func TestRankStems(t *testing.T) {
	urls := []string{
		"https://example.com/",
		"https://example.com/docs/retries",
		"https://example.com/docs/configuration",
		"https://example.com/docs/retry",
		"https://example.com/api/MaxRetries",
	}
	tests := []struct {
		name, query string
		want        []int // indexes into urls
	}{
		{"a plural meets its singular, after the word as written", "retry", []int{3, 1, 4, 0, 2}},
		{"an identifier's part is a whole word", "retries", []int{1, 4, 3, 0, 2}},
		{"a stem inside a longer word", "configure", []int{2, 0, 1, 3, 4}},
		{"a request word is a stop word", "please explain the configuration", []int{2, 0, 1, 3, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want []string
			for _, i := range tt.want {
				want = append(want, urls[i])
			}
			if got := Rank(slices.Clone(urls), tt.query); !slices.Equal(got, want) {
				t.Errorf("Rank(%q)\n got %q\nwant %q", tt.query, got, want)
			}
		})
	}
}
