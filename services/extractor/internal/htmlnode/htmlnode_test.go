package htmlnode

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func parseBody(t *testing.T, fragment string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(fragment))
	if err != nil {
		t.Fatal(err)
	}
	return First(doc, "body")
}

func TestText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"collapses and trims", "<p>  a \n b  </p>", "a b"},
		{"inline elements do not split words", "<p>un<b>bold</b>ed <i>x</i></p>", "unbolded x"},
		{"blocks separate words", "<div>one</div><div>two</div><p>three</p>", "one two three"},
		{"skips scripts and styles", "<p>a<script>s()</script><style>x{}</style>b</p>", "ab"},
		{"br separates", "a<br>b", "a b"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := parseBody(t, tt.in)
			if got := Text(body); got != tt.want {
				t.Errorf("Text = %q, want %q", got, tt.want)
			}
			if got := TextLen(body); got != len([]rune(tt.want)) {
				t.Errorf("TextLen = %d, want %d", got, len([]rune(tt.want)))
			}
		})
	}
}

func TestDeepTreesDoNotRecurse(t *testing.T) {
	t.Parallel()
	// A million levels: any recursion would need a huge stack.
	root := &html.Node{Type: html.ElementNode, Data: "div"}
	n := root
	for range 1_000_000 {
		c := &html.Node{Type: html.ElementNode, Data: "div"}
		n.AppendChild(c)
		n = c
	}
	n.AppendChild(&html.Node{Type: html.TextNode, Data: "leaf"})

	count := 0
	Walk(root, func(*html.Node) bool { count++; return true })
	if count != 1_000_002 {
		t.Errorf("Walk visited %d nodes", count)
	}
	if got := Text(root); got != "leaf" {
		t.Errorf("Text = %q", got)
	}
	if got := First(root, "nope"); got != nil {
		t.Errorf("First = %v", got)
	}
	if !Contains(root, n) || Closest(n, "div") != n.Parent {
		t.Error("Contains or Closest wrong")
	}
}

func TestWalkSkipsChildren(t *testing.T) {
	t.Parallel()
	body := parseBody(t, "<div><p>skip</p></div><p>keep</p>")
	var seen []string
	Walk(body, func(n *html.Node) bool {
		if n.Type == html.TextNode {
			seen = append(seen, n.Data)
		}
		return n.Data != "div"
	})
	if strings.Join(seen, ",") != "keep" {
		t.Errorf("seen %v", seen)
	}
}

func TestIsHidden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{`<p hidden>x</p>`, true},
		{`<p aria-hidden="TRUE">x</p>`, true},
		{`<p aria-hidden="false">x</p>`, false},
		{`<p style="color:red; display : none">x</p>`, true},
		{`<p style="visibility:hidden">x</p>`, true},
		{`<p style="display:block">x</p>`, false},
		{`<p>x</p>`, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			if got := IsHidden(First(parseBody(t, tt.in), "p")); got != tt.want {
				t.Errorf("IsHidden = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAttrs(t *testing.T) {
	t.Parallel()
	body := parseBody(t, `<div id="w"><b>a</b>c</div>`)
	w := First(body, "div")
	SetAttr(w, "class", "x")
	SetAttr(w, "class", "y")
	if Attr(w, "class") != "y" || !HasAttr(w, "id") {
		t.Errorf("attrs = %v", w.Attr)
	}
	DelAttr(w, "id")
	if HasAttr(w, "id") {
		t.Error("id not deleted")
	}
	Remove(w)
	if First(body, "div") != nil {
		t.Error("div not removed")
	}
}

func TestWords(t *testing.T) {
	t.Parallel()
	type word struct {
		w     string
		space bool
	}
	skipTags := func(tags ...string) func(*html.Node) bool {
		return func(n *html.Node) bool { return isOneOf(n.Data, tags) }
	}
	tests := []struct {
		name string
		in   string
		skip func(*html.Node) bool
		max  int
		want []word
	}{
		{"all", "<p>one <b>two</b></p><div>three</div><script>x</script>four", nil, 100,
			[]word{{"one", false}, {"two", true}, {"three", true}, {"four", true}}},
		{"a skipped block still separates words", "<div>one<select><option>x</select>two</div>", skipTags("select"), 100,
			[]word{{"one", false}, {"two", true}}},
		{"a skipped inline element does not", "un<b>bold</b>ed", skipTags("b"), 100,
			[]word{{"un", false}, {"ed", false}}},
		{"stops when emit says so", "<p>one two</p><p>three</p>", nil, 2,
			[]word{{"one", false}, {"two", true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []word
			Words(parseBody(t, tt.in), tt.skip, func(w string, space bool) bool {
				got = append(got, word{w, space})
				return len(got) < tt.max
			})
			if !slices.Equal(got, tt.want) {
				t.Errorf("words = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestHasToken(t *testing.T) {
	t.Parallel()
	tests := []struct {
		list, token string
		want        bool
	}{
		{"articleBody text", "articlebody", true},
		{"  a\tb\n", "b", true},
		{"articleBodyX", "articlebody", false},
		{"", "a", false},
	}
	for _, tt := range tests {
		if got := HasToken(tt.list, tt.token); got != tt.want {
			t.Errorf("HasToken(%q, %q) = %v, want %v", tt.list, tt.token, got, tt.want)
		}
	}
}

func TestVisibleText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		limit   int
		skip    []string
		want    string
		wantCut bool
	}{
		{"as Text without a limit", "<p>  one <b>t</b>wo </p><div>three</div><script>x</script>", 0, nil, "one two three", false},
		{"skipped subtrees still separate words", "<label>Pick<select><option>x</select>one</label>", 0, []string{"select"}, "Pick one", false},
		{"cut within a word", "<p>abcdef</p>", 4, nil, "abcd", true},
		{"the space before a word counts", "<p>ab cd</p>", 3, nil, "ab", true},
		{"exactly at the limit", "<p>ab cd</p>", 5, nil, "ab cd", false},
		{"runes, not bytes", "<p>été</p>", 3, nil, "été", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, cut := VisibleText(parseBody(t, tt.in), tt.limit, tt.skip...)
			if got != tt.want || cut != tt.wantCut {
				t.Errorf("VisibleText = %q, %v, want %q, %v", got, cut, tt.want, tt.wantCut)
			}
		})
	}
}

func TestCountAttr(t *testing.T) {
	t.Parallel()
	tests := []struct {
		attr   string
		lo, hi int
		want   int
	}{
		{``, 1, 10, 1},
		{`colspan="3"`, 1, 10, 3},
		{`colspan=" 7 "`, 1, 10, 7},
		{`colspan="300"`, 1, 10, 10},
		{`colspan="0"`, 1, 10, 1},
		{`colspan="0"`, 0, 10, 0},
		{`colspan="-5"`, 0, 10, 1},
		{`colspan="2x"`, 1, 10, 1},
	}
	for _, tt := range tests {
		t.Run(tt.attr, func(t *testing.T) {
			t.Parallel()
			td := First(parseBody(t, "<table><tr><td "+tt.attr+">x</td></tr></table>"), "td")
			if got := CountAttr(td, "colspan", tt.lo, tt.hi); got != tt.want {
				t.Errorf("CountAttr in [%d, %d] = %d, want %d", tt.lo, tt.hi, got, tt.want)
			}
		})
	}
}

func TestTextLenUpToStopsAtTheLimit(t *testing.T) {
	doc, err := html.Parse(strings.NewReader(`<p>Hello world</p><p>and more words after it</p>`))
	if err != nil {
		t.Fatal(err)
	}
	all := TextLen(doc)
	if want := len("Hello world and more words after it"); all != want {
		t.Fatalf("TextLen = %d, want %d", all, want)
	}
	if got := TextLenUpTo(doc, -1); got != all {
		t.Errorf("TextLenUpTo(-1) = %d, want %d", got, all)
	}
	if got := TextLenUpTo(doc, 8); got < 8 || got >= all {
		t.Errorf("TextLenUpTo(8) = %d, want at least 8 and less than the whole %d", got, all)
	}
	if got := TextLenUpTo(doc, 1000); got != all {
		t.Errorf("TextLenUpTo(1000) = %d, want the whole %d", got, all)
	}
}
