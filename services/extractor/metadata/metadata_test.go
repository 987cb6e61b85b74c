package metadata

import (
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func read(t *testing.T, page string) Metadata {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse("https://site.example.com/news/item")
	return Read(doc, base)
}

func TestRead(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		page string
		want Metadata
	}{
		{
			name: "meta and opengraph",
			page: `<html lang="de"><head>
<meta property="og:title" content="Der Titel">
<meta property="og:site_name" content="Die Zeitung">
<meta property="og:description" content="Kurz gesagt.">
<meta property="og:image" content="/bild.jpg">
<meta property="article:published_time" content="2023-01-02T03:04:05Z">
<meta name="author" content="Erika Mustermann">
</head></html>`,
			want: Metadata{
				Title: "Der Titel", Byline: "Erika Mustermann", Description: "Kurz gesagt.",
				Published: "2023-01-02T03:04:05Z", SiteName: "Die Zeitung", Language: "de",
				Image: "https://site.example.com/bild.jpg",
			},
		},
		{
			name: "json-ld fills what meta lacks",
			page: `<head><title>Headline | Paper</title><script type="application/ld+json">
[{"@type":"Organization","name":"Paper Org"},
 {"@type":["NewsArticle"],"headline":"Headline","author":{"@type":"Person","name":"Sam Lee"},
  "datePublished":"2022-12-31","description":"From JSON-LD.",
  "image":[{"@type":"ImageObject","url":"https://img.example.com/a.jpg"}],
  "publisher":{"name":"The Paper"}}]
</script></head><body><h1>Headline</h1></body>`,
			want: Metadata{
				Title: "Headline", Byline: "Sam Lee", Description: "From JSON-LD.",
				Published: "2022-12-31", SiteName: "The Paper", Image: "https://img.example.com/a.jpg",
			},
		},
		{
			name: "broken json-ld ignored",
			page: `<title>T</title><script type="application/ld+json">{"@type": "Article", "author": </script>`,
			want: Metadata{Title: "T"},
		},
		{
			name: "page markup: time, itemprop, og:locale",
			page: `<head><title>T</title><meta property="og:locale" content="pt_BR"></head>
<body><span itemprop="author">Ana Souza</span><time datetime="2021-07-08">8 July</time></body>`,
			want: Metadata{Title: "T", Byline: "Ana Souza", Published: "2021-07-08", Language: "pt-BR"},
		},
		{
			name: "non-http image ignored",
			page: `<title>T</title><meta property="og:image" content="javascript:x"><meta name="twitter:image" content="https://t.example.com/i.png">`,
			want: Metadata{Title: "T", Image: "https://t.example.com/i.png"},
		},
		{
			name: "overlong byline is a bio, not a name",
			page: `<title>T</title><div class="byline">` + strings.Repeat("word ", 40) + `</div>`,
			want: Metadata{Title: "T"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := read(t, tt.page); got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestCleanTitle(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		title    string
		siteName string
		h1s      []string
		want     string
	}{
		{"h1 equals the head", "Big News | Daily", "", []string{"Big News"}, "Big News"},
		{"h1 equals the tail", "Daily » Big News", "", []string{"Big News"}, "Big News"},
		{"h1 spanning a separator", "Part - One - Site", "", []string{"Part - One"}, "Part - One"},
		{"case-insensitive h1", "BIG NEWS | Daily", "", []string{"Big News"}, "BIG NEWS"},
		{"site name suffix", "Big News – Daily", "Daily", nil, "Big News"},
		{"site name prefix", "Daily: Big News", "daily", nil, "Big News"},
		{"whole title is the h1", "A | B", "", []string{"A | B"}, "A | B"},
		{"no evidence", "A | B", "", []string{"Unrelated"}, "A | B"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := cleanTitle(tt.title, tt.siteName, tt.h1s); got != tt.want {
				t.Errorf("cleanTitle(%q) = %q, want %q", tt.title, got, tt.want)
			}
		})
	}
}

func TestCleanByline(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"By Jane Doe", "Jane Doe"},
		{"  written by   Jane   Doe ", "Jane Doe"},
		{"https://facebook.com/jane", ""},
		{"www.example.com/jane", ""},
		{"", ""},
		{"Jane Doe and John Roe", "Jane Doe and John Roe"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			if got := cleanByline(tt.in); got != tt.want {
				t.Errorf("cleanByline(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestMetaTags(t *testing.T) {
	t.Parallel()
	doc, err := html.Parse(strings.NewReader(`<head>
<meta name="Description" content="   ">
<meta property=" OG:Title " content="First  title">
<meta name="og:title" content="Second title">
<meta property="og:image" name="twitter:image" content="/shared.png">
<meta itemprop="datePublished" content="2020-01-02">
<meta name="deſcription" content="Folded">
<meta name="description" content="Plain">
</head>`))
	if err != nil {
		t.Fatal(err)
	}
	tags := metaTags(doc)
	for key, want := range map[string]string{
		// Empty content passes the tag over; strings.EqualFold matches
		// the long s with s.
		"description":   "Folded",
		"og:title":      "First title",
		"og:image":      "/shared.png",
		"twitter:image": "/shared.png",
		"datepublished": "2020-01-02",
		"og:site_name":  "",
	} {
		if got := tags.get(key); got != want {
			t.Errorf("get(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestHasWordMatchesAsTheSelector(t *testing.T) {
	for _, tt := range []struct {
		v    string
		want bool
	}{
		{"author", true},
		{"post author", true},
		{"author\tcard", true},
		{"co-author", false},
		{"authors", false},
		{"coauthor author", true},
		{"", false},
		{"Author", false},
	} {
		if got := hasWord(tt.v, "author"); got != tt.want {
			t.Errorf("hasWord(%q, author) = %v, want %v", tt.v, got, tt.want)
		}
	}
}
