package fetch

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"
)

// words gives the generated articles prose-like text: real extraction cost
// depends on word and sentence shape, not only on byte count.
var words = strings.Fields(`the of and to in a is that for it as was with be by on not he
this are or his from at which but have an they you were her she there been one all we
their has would when if so no will what can more out about up them some could into than
system network protocol server request latency throughput queue worker message stream
cluster deployment engineer benchmark measurement result analysis performance research
history government economy market policy election report council committee minister
climate energy transport city river mountain village harbour museum library university
article reader editor journalist evidence interview statement announcement investigation`)

// article renders page i: a realistic news or blog page of 20 to 50 KiB with
// navigation, sidebars and a footer around the article body, so the
// extractor has boilerplate to remove.
func article(i int) []byte {
	r := rand.New(rand.NewPCG(uint64(i), 0x5eed))
	target := 20<<10 + r.IntN(30<<10)
	sentence := func() string {
		n := 8 + r.IntN(18)
		var b strings.Builder
		for j := range n {
			w := words[r.IntN(len(words))]
			if j == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			} else {
				b.WriteByte(' ')
			}
			b.WriteString(w)
		}
		b.WriteString(". ")
		return b.String()
	}

	var b strings.Builder
	title := strings.TrimSuffix(sentence(), ". ")
	fmt.Fprintf(&b, `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>%s | The Loopback Gazette</title>
<meta name="description" content="%s">
<meta property="og:title" content="%s">
<meta name="author" content="Reporter %d">
<link rel="stylesheet" href="/static/site.css">
<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}gtag('js',new Date());</script>
</head><body>
<header class="site-header"><a class="logo" href="/">The Loopback Gazette</a>
<nav><ul>`, title, sentence(), title, i%37)
	for _, s := range []string{"World", "Politics", "Business", "Technology", "Science", "Culture", "Sport", "Opinion"} {
		fmt.Fprintf(&b, `<li><a href="/section/%s">%s</a></li>`, strings.ToLower(s), s)
	}
	b.WriteString(`</ul></nav><form class="search"><input name="q" placeholder="Search"></form></header>
<div class="cookie-banner">We use cookies to improve your experience. <button>Accept</button></div>
<main><article>
`)
	fmt.Fprintf(&b, "<h1>%s</h1>\n<p class=\"byline\">By Reporter %d &middot; <time datetime=\"2026-03-%02d\">March %d, 2026</time></p>\n", title, i%37, 1+i%28, 1+i%28)
	const tail = 6 << 10 // room for the sidebar and footer
	for para := 0; b.Len() < target-tail; para++ {
		if para > 0 && para%6 == 0 {
			fmt.Fprintf(&b, "<h2>%s</h2>\n", strings.TrimSuffix(sentence(), ". "))
		}
		if para%9 == 4 {
			fmt.Fprintf(&b, "<blockquote><p>%s</p></blockquote>\n", sentence())
			continue
		}
		if para%11 == 7 {
			b.WriteString("<ul>")
			for range 4 {
				fmt.Fprintf(&b, "<li>%s</li>", sentence())
			}
			b.WriteString("</ul>\n")
			continue
		}
		b.WriteString("<p>")
		for range 3 + r.IntN(5) {
			b.WriteString(sentence())
		}
		if r.IntN(3) == 0 {
			fmt.Fprintf(&b, `See also <a href="/articles/%d">%s</a>.`, r.IntN(1000), strings.TrimSuffix(sentence(), ". "))
		}
		b.WriteString("</p>\n")
	}
	b.WriteString("</article>\n<aside class=\"related\"><h3>Most read</h3><ol>")
	for range 10 {
		fmt.Fprintf(&b, `<li><a href="/articles/%d">%s</a></li>`, r.IntN(1000), strings.TrimSuffix(sentence(), ". "))
	}
	b.WriteString("</ol></aside></main>\n<footer><nav>")
	for _, s := range []string{"About", "Contact", "Careers", "Privacy", "Terms", "Advertise", "Newsletters", "Archive"} {
		fmt.Fprintf(&b, `<a href="/%s">%s</a> `, strings.ToLower(s), s)
	}
	b.WriteString("</nav><p>&copy; 2026 The Loopback Gazette. All rights reserved.</p></footer>\n")
	for b.Len() < target {
		b.WriteString("<!-- padding to the page's size -->\n")
	}
	b.WriteString("</body></html>\n")
	return []byte(b.String())
}

// Serve serves count article pages at /articles/0 .. /articles/count-1 on
// loopback, each answer delayed by delay as a distant server's would be,
// and returns the server and the pages' average size. The pages are
// rendered once up front, so serving costs the same in every round.
func Serve(count int, delay time.Duration) (*httptest.Server, int) {
	pages := make([][]byte, count)
	total := 0
	for i := range pages {
		pages[i] = article(i)
		total += len(pages[i])
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /articles/{i}", func(w http.ResponseWriter, r *http.Request) {
		i, err := strconv.Atoi(r.PathValue("i"))
		if err != nil || i < 0 || i >= count {
			http.NotFound(w, r)
			return
		}
		if delay > 0 {
			time.Sleep(delay)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(pages[i])
	})
	return httptest.NewServer(mux), total / max(count, 1)
}
