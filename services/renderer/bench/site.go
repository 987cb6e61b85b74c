package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
)

// marker closes the article's last paragraph. It reaches the page only
// through the JSON the app fetches, so a DOM that holds it was rendered.
const marker = "bench-render-marker-7f3a: end of the article"

// readyTag is how the serialized DOM shows the element the app adds last.
// The script sets the id as a property, so its source never contains it.
const readyTag = `<div id="ready"`

// shell is the page as served: an empty mount point and the script that
// fills it, as a client-side app ships.
const shell = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Loading… | The Loopback Gazette</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:sans-serif;max-width:42rem;margin:auto}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .5rem}</style>
</head><body>
<header><a href="/">The Loopback Gazette</a></header>
<div id="app"></div>
<noscript>This site needs JavaScript.</noscript>
<script>
(async () => {
	const res = await fetch('/api/article', {headers: {Accept: 'application/json'}});
	const a = await res.json();
	const el = (tag, text) => {
		const e = document.createElement(tag);
		if (text !== undefined) e.textContent = text;
		return e;
	};
	document.title = a.title + ' | The Loopback Gazette';
	const art = el('article');
	art.append(el('h1', a.title), el('p', a.byline));
	for (const s of a.sections) {
		art.append(el('h2', s.heading));
		for (const p of s.paragraphs) art.append(el('p', p));
	}
	const ul = el('ul');
	for (const item of a.list) ul.append(el('li', item));
	art.append(ul);
	const table = el('table'), head = el('tr'), body = el('tbody');
	for (const h of a.table.head) head.append(el('th', h));
	table.append(el('thead'), body);
	table.tHead.append(head);
	for (const row of a.table.rows) {
		const tr = el('tr');
		for (const c of row) tr.append(el('td', c));
		body.append(tr);
	}
	art.append(table, el('p', a.closing));
	document.getElementById('app').append(art);
	const ready = el('div');
	ready.id = 'ready';
	document.getElementById('app').append(ready);
})();
</script>
</body></html>
`

// article is what the app's API returns.
type article struct {
	Title    string    `json:"title"`
	Byline   string    `json:"byline"`
	Sections []section `json:"sections"`
	List     []string  `json:"list"`
	Table    struct {
		Head []string   `json:"head"`
		Rows [][]string `json:"rows"`
	} `json:"table"`
	Closing string `json:"closing"`
}

type section struct {
	Heading    string   `json:"heading"`
	Paragraphs []string `json:"paragraphs"`
}

// newArticle builds an article of four sections of five paragraphs, a list
// and a table: the size of a news story once rendered.
func newArticle() article {
	a := article{
		Title:  "Harbour authority publishes a year of tide measurements",
		Byline: "By Reporter 7 · March 3, 2026",
		List: []string{
			"Gauges were read every six minutes at all four stations.",
			"Readings were checked against the 1998 survey datum.",
			"Storm surges were flagged rather than removed from the series.",
			"The raw files are published under an open licence.",
		},
		Closing: "Readers can send corrections to the data desk. " + marker,
	}
	headings := []string{"What was measured", "How the gauges work", "What the year showed", "What comes next"}
	for s, h := range headings {
		sec := section{Heading: h}
		for p := range 5 {
			sec.Paragraphs = append(sec.Paragraphs, fmt.Sprintf(
				"Paragraph %d of section %d. The harbour's four tide gauges recorded the water level through the year, "+
					"and the engineers who maintain them compared each reading with the neighbouring stations before it was "+
					"accepted. Where two stations disagreed by more than a few centimetres the older reading was kept and the "+
					"difference noted, so that the published series shows its own uncertainty rather than hiding it.", p+1, s+1))
		}
		a.Sections = append(a.Sections, sec)
	}
	a.Table.Head = []string{"Station", "Highest (m)", "Lowest (m)", "Mean range (m)"}
	for i, name := range []string{"North Mole", "Fish Quay", "Ferry Terminal", "River Mouth", "Outer Buoy"} {
		a.Table.Rows = append(a.Table.Rows, []string{
			name, fmt.Sprintf("%.2f", 5.1+0.13*float64(i)), fmt.Sprintf("%.2f", -0.4-0.07*float64(i)), fmt.Sprintf("%.2f", 3.8+0.09*float64(i)),
		})
	}
	return a
}

// serve starts a loopback server answering the shell at / and its article
// at /api/article, both encoded once up front, and the pages of the actions
// and block workloads, counting what it writes in counted. It returns the
// sizes of the shell and the article.
func serve(counted *served) (srv *httptest.Server, shellSize, apiSize int, err error) {
	api, err := json.Marshal(newArticle())
	if err != nil {
		return nil, 0, 0, fmt.Errorf("encode article: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write([]byte(shell))
	})
	mux.HandleFunc("GET /api/article", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(api)
	})
	serveActions(mux)
	serveMedia(mux)
	return httptest.NewServer(counted.wrap(mux)), len(shell), len(api), nil
}

// checkDOM fails unless html is the page after its app ran to the end.
func checkDOM(html []byte) error {
	switch {
	case !bytes.Contains(html, []byte(marker)):
		return fmt.Errorf("rendered DOM (%d bytes) lacks the article's marker %q: the app did not build the article", len(html), marker)
	case !bytes.Contains(html, []byte(readyTag)):
		return fmt.Errorf("rendered DOM (%d bytes) lacks the #ready element the app adds last", len(html))
	}
	return nil
}
