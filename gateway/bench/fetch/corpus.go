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
	p := &pageWriter{r: rand.New(rand.NewPCG(uint64(i), 0x5eed))}
	target := 20<<10 + p.r.IntN(30<<10)
	title := strings.TrimSuffix(p.sentence(), ". ")
	p.header(i, title)
	p.body(i, title, target)
	p.footer(target)
	return []byte(p.b.String())
}

// pageWriter writes one generated article from its own random source: the
// same page number gives the same bytes.
type pageWriter struct {
	r *rand.Rand
	b strings.Builder
}

// sentence is 8 to 25 words, the first capitalised, and a full stop.
func (p *pageWriter) sentence() string {
	n := 8 + p.r.IntN(18)
	var b strings.Builder
	for j := range n {
		w := words[p.r.IntN(len(words))]
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

// header writes the head, with its metadata and a tracking script, and the
// site's header: logo, section menu, search and a cookie banner.
func (p *pageWriter) header(i int, title string) {
	fmt.Fprintf(&p.b, `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>%s | The Loopback Gazette</title>
<meta name="description" content="%s">
<meta property="og:title" content="%s">
<meta name="author" content="Reporter %d">
<link rel="stylesheet" href="/static/site.css">
<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}gtag('js',new Date());</script>
</head><body>
<header class="site-header"><a class="logo" href="/">The Loopback Gazette</a>
<nav><ul>`, title, p.sentence(), title, i%37)
	for _, s := range []string{"World", "Politics", "Business", "Technology", "Science", "Culture", "Sport", "Opinion"} {
		fmt.Fprintf(&p.b, `<li><a href="/section/%s">%s</a></li>`, strings.ToLower(s), s)
	}
	p.b.WriteString(`</ul></nav><form class="search"><input name="q" placeholder="Search"></form></header>
<div class="cookie-banner">We use cookies to improve your experience. <button>Accept</button></div>
<main><article>
`)
}

// body writes the article: its title and byline, then paragraphs with now
// and then a subheading, a quote or a list, until the page is within room
// for the sidebar and footer of target bytes.
func (p *pageWriter) body(i int, title string, target int) {
	fmt.Fprintf(&p.b, "<h1>%s</h1>\n<p class=\"byline\">By Reporter %d &middot; <time datetime=\"2026-03-%02d\">March %d, 2026</time></p>\n", title, i%37, 1+i%28, 1+i%28)
	const tail = 6 << 10 // room for the sidebar and footer
	for para := 0; p.b.Len() < target-tail; para++ {
		if para > 0 && para%6 == 0 {
			fmt.Fprintf(&p.b, "<h2>%s</h2>\n", strings.TrimSuffix(p.sentence(), ". "))
		}
		if para%9 == 4 {
			fmt.Fprintf(&p.b, "<blockquote><p>%s</p></blockquote>\n", p.sentence())
			continue
		}
		if para%11 == 7 {
			p.b.WriteString("<ul>")
			for range 4 {
				fmt.Fprintf(&p.b, "<li>%s</li>", p.sentence())
			}
			p.b.WriteString("</ul>\n")
			continue
		}
		p.b.WriteString("<p>")
		for range 3 + p.r.IntN(5) {
			p.b.WriteString(p.sentence())
		}
		if p.r.IntN(3) == 0 {
			fmt.Fprintf(&p.b, `See also <a href="/articles/%d">%s</a>.`, p.r.IntN(1000), strings.TrimSuffix(p.sentence(), ". "))
		}
		p.b.WriteString("</p>\n")
	}
	p.b.WriteString("</article>\n")
}

// footer writes the "most read" sidebar and the site's footer, and pads
// the page to target bytes.
func (p *pageWriter) footer(target int) {
	p.b.WriteString("<aside class=\"related\"><h3>Most read</h3><ol>")
	for range 10 {
		fmt.Fprintf(&p.b, `<li><a href="/articles/%d">%s</a></li>`, p.r.IntN(1000), strings.TrimSuffix(p.sentence(), ". "))
	}
	p.b.WriteString("</ol></aside></main>\n<footer><nav>")
	for _, s := range []string{"About", "Contact", "Careers", "Privacy", "Terms", "Advertise", "Newsletters", "Archive"} {
		fmt.Fprintf(&p.b, `<a href="/%s">%s</a> `, strings.ToLower(s), s)
	}
	p.b.WriteString("</nav><p>&copy; 2026 The Loopback Gazette. All rights reserved.</p></footer>\n")
	for p.b.Len() < target {
		p.b.WriteString("<!-- padding to the page's size -->\n")
	}
	p.b.WriteString("</body></html>\n")
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
