package readable

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"testing"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

func TestZZWide(t *testing.T) {
	id := os.Getenv("ZZ")
	if id == "" {
		t.Skip()
	}
	f, _ := os.Open("/work/wcxb/dev/html/" + id + ".html.gz")
	z, _ := gzip.NewReader(f)
	b, _ := io.ReadAll(z)
	doc, _ := html.Parse(bytes.NewReader(b))
	ShowStreamed(doc)
	ShowNoscript(doc)
	body := htmlnode.First(doc, "body")
	st := measure(body)
	removeNonContent(body, st)
	st = measure(body)
	desc := func(n *html.Node) string {
		return fmt.Sprintf("%s id=%s class=%.60s role=%s text=%d hint=%b", n.Data, htmlnode.Attr(n, "id"), htmlnode.Attr(n, "class"), htmlnode.Attr(n, "role"), st.of(n).text, st.of(n).hint)
	}
	fmt.Println("body", desc(body))
	rootText := st.of(body).text
	htmlnode.Walk(body, func(n *html.Node) bool {
		if n.Type != html.ElementNode || n == body {
			return n.Type == html.ElementNode
		}
		if isChrome(n, st, rootText, true) {
			if st.of(n).text > 100 {
				fmt.Println(" chrome", desc(n))
			}
			return false
		}
		return true
	})
}
