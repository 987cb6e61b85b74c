package readable

import (
	"context"
	"strings"
	"testing"

	"distill.dev/services/extractor/internal/htmlnode"
)

// streamedPage is a page as streaming React sends it: the shell with a
// pending boundary (its loading skeleton shown meanwhile) and a pending
// segment, then the parts, hidden, at the end of the body, and a part
// whose placeholder never came.
const streamedPage = `<html><head><title>Growing garlic</title></head><body>
<header><a href="/">Allotment Notes</a></header>
<main>
<!--$?--><template id="B:0"></template><div class="skeleton">Loading…</div><!--/$-->
<aside><template id="P:1"></template></aside>
</main>
<footer>© Allotment Notes</footer>
<div hidden id="S:0"><article><h1>Growing garlic</h1>
<p>Plant the cloves in autumn, pointed end up, a hand's width apart and two knuckles deep.</p>
<p>Cut the flower stalks in early summer so the plant puts its strength into the bulb.</p>
<p>Lift the bulbs when the lower leaves turn brown and dry them somewhere airy for a fortnight.</p></article></div>
<div hidden id="S:1"><p>Related: onions from sets</p></div>
<div hidden id="S:7"><p>A part whose placeholder is missing is shown where it stands.</p></div>
<script>$RC("B:0","S:0")</script>
</body></html>`

func TestShowStreamed(t *testing.T) {
	t.Parallel()
	doc := parse(t, streamedPage)
	ShowStreamed(doc)
	main := htmlnode.First(doc, "main")
	if a := htmlnode.First(main, "article"); a == nil || !strings.Contains(htmlnode.Text(a), "Plant the cloves") {
		t.Fatalf("the article is not in main where its boundary was:\n%s", htmlnode.Text(main))
	}
	if strings.Contains(htmlnode.Text(doc), "Loading") {
		t.Errorf("the boundary's loading skeleton stayed")
	}
	if aside := htmlnode.First(main, "aside"); aside == nil || !strings.Contains(htmlnode.Text(aside), "onions from sets") {
		t.Errorf("the segment is not in the aside where its placeholder was")
	}
	if n := len(htmlnode.Elements(doc, "template")); n != 0 {
		t.Errorf("%d placeholders stayed", n)
	}
	for _, div := range htmlnode.Elements(doc, "div") {
		id := htmlnode.Attr(div, "id")
		if id == "S:0" || id == "S:1" {
			t.Errorf("the emptied segment %s stayed", id)
		}
		if id == "S:7" && htmlnode.HasAttr(div, "hidden") {
			t.Errorf("the segment without a placeholder is still hidden")
		}
	}

	doc = parse(t, streamedPage)
	ShowStreamed(doc)
	ShowNoscript(doc)
	content, err := ArticleOf(context.Background(), doc, Classify(doc, nil))
	if err != nil {
		t.Fatal(err)
	}
	if text := htmlnode.Text(content); !strings.Contains(text, "Lift the bulbs") || strings.Contains(text, "Allotment Notes") {
		t.Errorf("the reader did not read the streamed article:\n%s", text)
	}
}

// TestShowStreamedKeepsAnOpenBoundary: a boundary with no closing comment
// has no known fallback, and the nodes after its template stay.
func TestShowStreamedKeepsAnOpenBoundary(t *testing.T) {
	t.Parallel()
	doc := parse(t, `<body><main><template id="B:0"></template><p>Shown before the part, kept after it.</p></main>
<div hidden id="S:0"><p>The part.</p></div></body>`)
	ShowStreamed(doc)
	text := htmlnode.Text(htmlnode.First(doc, "main"))
	if !strings.Contains(text, "The part.") || !strings.Contains(text, "kept after it") {
		t.Errorf("main reads %q", text)
	}
}
