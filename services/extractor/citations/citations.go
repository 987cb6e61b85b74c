// Package citations moves the URLs of a Markdown page's links and images
// into numbered footnotes under a closing "## Links" section, so the text
// reads without them and a model can cite a source by a short, stable
// number.
//
// [text](url) becomes text[^1] and ![alt](url) becomes ![alt][^2]. Numbers
// follow the order in which URLs first appear and a URL keeps its first
// number; numbering starts after the page's own numbered footnotes. Code
// blocks and code spans are left as they are, as are autolinks and
// reference-style links. A link to a place on the same page, and one whose
// URL is not http(s) or mailto (javascript:), keeps its text and loses its
// URL.
package citations

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"distill.dev/services/extractor/blocks"
	"distill.dev/services/extractor/markdown"
)

// Notes numbers URLs. One Notes used over several pages keeps counting, so
// that a number names one URL across all of them.
type Notes struct {
	next  int
	num   map[string]int
	order []string
}

// New returns Notes whose first number is after.
func New(after int) *Notes {
	return &Notes{next: after + 1, num: map[string]int{}}
}

// Len is how many URLs have a number.
func (n *Notes) Len() int { return len(n.order) }

// number returns u's number, giving it the next one if it has none.
func (n *Notes) number(u string) int {
	if k, ok := n.num[u]; ok {
		return k
	}
	k := n.next
	n.next++
	n.num[u] = k
	n.order = append(n.order, u)
	return k
}

// Section is the "## Links" section listing every numbered URL, or "" when
// there is none.
func (n *Notes) Section() string {
	if len(n.order) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Links\n")
	for _, u := range n.order {
		b.WriteString("\n[^" + strconv.Itoa(n.num[u]) + "]: " + u)
	}
	return b.String()
}

// Apply rewrites md, a page at page (nil when unknown), with its links as
// numbered footnotes and the "## Links" section at its end.
func Apply(md string, page *url.URL) string {
	n := New(LastFootnote(md))
	body := n.Rewrite(md, page)
	if s := n.Section(); s != "" {
		return strings.TrimRight(body, "\n") + "\n\n" + s
	}
	return body
}

var footnoteRef = regexp.MustCompile(`\[\^(\d{1,6})\]`)

// LastFootnote returns the highest number of the numbered footnotes md
// already has, 0 when it has none.
func LastFootnote(md string) int {
	last := 0
	eachText(md, func(text string) string {
		for _, m := range footnoteRef.FindAllStringSubmatch(text, -1) {
			if k, err := strconv.Atoi(m[1]); err == nil && k > last {
				last = k
			}
		}
		return text
	})
	return last
}

// Rewrite returns md with its links and images replaced by footnote
// references, numbering their URLs in n.
func (n *Notes) Rewrite(md string, page *url.URL) string {
	return eachText(md, func(text string) string { return n.rewriteText(text, page, 0) })
}

// maxNesting bounds how deep links inside link labels are rewritten: a
// linked image is two deep, and a hostile page's thousand must not
// recurse a thousand times.
const maxNesting = 4

// closers returns, for each '[' of s that a ']' closes, where that ']'
// is: one pass with a stack, skipping escapes and code spans, so that
// finding a label costs nothing per bracket.
func closers(s string) map[int]int {
	out := map[int]int{}
	var stack []int
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '`':
			i = codeSpanEnd(s, i) - 1
		case '[':
			stack = append(stack, i)
		case ']':
			if len(stack) > 0 {
				out[stack[len(stack)-1]] = i
				stack = stack[:len(stack)-1]
			}
		}
	}
	return out
}

// eachText calls fn on each stretch of md outside fenced code blocks and
// joins the results with the code as it was.
func eachText(md string, fn func(string) string) string {
	var out, text []string
	fence := ""
	flush := func() {
		if len(text) > 0 {
			out = append(out, fn(strings.Join(text, "\n")))
			text = text[:0]
		}
	}
	for _, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case fence != "":
			out = append(out, line)
			if markdown.ClosesFence(trimmed, fence) {
				fence = ""
			}
			continue
		case blocks.FenceOf(trimmed) != "":
			flush()
			fence = blocks.FenceOf(trimmed)
			out = append(out, line)
			continue
		}
		text = append(text, line)
	}
	flush()
	return strings.Join(out, "\n")
}

// rewriteText rewrites the links of text, which holds no fenced code;
// depth is how many labels deep text is.
func (n *Notes) rewriteText(s string, page *url.URL, depth int) string {
	var b strings.Builder
	closeOf := closers(s)
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			b.WriteString(s[i : i+2])
			i += 2
		case c == '`':
			end := codeSpanEnd(s, i)
			b.WriteString(s[i:end])
			i = end
		case c == '[' || c == '!' && i+1 < len(s) && s[i+1] == '[':
			image := c == '!'
			open := i
			if image {
				open++
			}
			label, dest, end, ok := link(s, open, closeOf)
			if !ok {
				b.WriteString(s[i : open+1])
				i = open + 1
				continue
			}
			// The label may hold links of its own: a linked image.
			if depth < maxNesting {
				label = n.rewriteText(label, page, depth+1)
			}
			target, keep := citable(dest, page)
			switch {
			case !keep && image:
				b.WriteString("![" + label + "]")
			case !keep:
				b.WriteString(label)
			case image:
				b.WriteString("![" + label + "][^" + strconv.Itoa(n.number(target)) + "]")
			default:
				b.WriteString(label + "[^" + strconv.Itoa(n.number(target)) + "]")
			}
			i = end
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// maxCodeSpan bounds how far a code span's closing backticks are looked
// for.
const maxCodeSpan = 64 << 10

// codeSpanEnd returns the end of the code span whose backticks start at i,
// or just past the backticks when they open none.
func codeSpanEnd(s string, i int) int {
	j := i
	for j < len(s) && s[j] == '`' {
		j++
	}
	ticks := s[i:j]
	limit := min(len(s), j+maxCodeSpan)
	for k := j; k < limit; {
		at := strings.Index(s[k:limit], ticks)
		if at < 0 {
			break
		}
		at += k
		end := at + len(ticks)
		if end < len(s) && s[end] == '`' {
			// A longer run closes nothing; skip it whole.
			for end < len(s) && s[end] == '`' {
				end++
			}
			k = end
			continue
		}
		return end
	}
	return j
}

// maxLabel and maxDest bound a link's label and destination: longer ones
// are text, and a destination is not looked for past its bound.
const (
	maxLabel = 4 << 10
	maxDest  = 4 << 10
)

// link reads an inline link whose label opens at s[open] == '[': the
// label, the destination (its URL, without a title) and the offset after
// the closing parenthesis. Reference links and bare brackets are not
// inline links.
func link(s string, open int, closeOf map[int]int) (label, dest string, end int, ok bool) {
	closeAt, found := closeOf[open]
	if !found || closeAt-open > maxLabel || closeAt+1 >= len(s) || s[closeAt+1] != '(' {
		return "", "", 0, false
	}
	label = s[open+1 : closeAt]
	k := closeAt + 2
	for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
		k++
	}
	start := k
	if k < len(s) && s[k] == '<' {
		e := strings.IndexByte(s[k:min(len(s), k+maxDest)], '>')
		if e < 0 {
			return "", "", 0, false
		}
		dest = s[k+1 : k+e]
		k += e + 1
	} else {
		parens := 0
		for k < len(s) && k-start <= maxDest && s[k] != ' ' && s[k] != '\n' && s[k] != '\t' {
			if s[k] == '\\' && k+1 < len(s) {
				k += 2
				continue
			}
			if s[k] == '(' {
				parens++
			}
			if s[k] == ')' {
				if parens == 0 {
					break
				}
				parens--
			}
			k++
		}
		dest = s[start:k]
	}
	// An optional title, then the closing parenthesis.
	for k < len(s) && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n') {
		k++
	}
	if k < len(s) && (s[k] == '"' || s[k] == '\'') {
		q := s[k]
		e := strings.IndexByte(s[k+1:min(len(s), k+1+maxDest)], q)
		if e < 0 {
			return "", "", 0, false
		}
		k += e + 2
		for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
			k++
		}
	}
	if k >= len(s) || s[k] != ')' {
		return "", "", 0, false
	}
	return label, dest, k + 1, true
}

// citable returns the URL a footnote names for a link's destination, and
// false for links that lose their URL: a place on the same page, and
// anything that is not http(s) or mailto.
func citable(dest string, page *url.URL) (string, bool) {
	dest = strings.TrimSpace(dest)
	if dest == "" || strings.HasPrefix(dest, "#") {
		return "", false
	}
	u, err := url.Parse(dest)
	if err != nil {
		return "", false
	}
	if page != nil {
		u = page.ResolveReference(u)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "mailto":
	default:
		return "", false
	}
	if page != nil && u.Fragment != "" && samePage(u, page) {
		return "", false
	}
	return u.String(), true
}

func samePage(u, page *url.URL) bool {
	a, b := *u, *page
	a.Fragment, b.Fragment = "", ""
	a.RawFragment, b.RawFragment = "", ""
	return a.String() == b.String()
}

// linksSection matches the "## Links" section Apply ends a page with.
var linksSection = regexp.MustCompile(`\n## Links\n\n((?:\[\^\d+\]: [^\n]+\n?)+)$`)

var noteLine = regexp.MustCompile(`^\[\^(\d+)\]: (.+)$`)

// Renumber rewrites a page that Apply cited so that its numbers come from
// n, which keeps counting across pages: printed one after another, pages
// then share one number per URL. The page's own footnotes, outside its
// "## Links" section, keep theirs.
func (n *Notes) Renumber(md string) string {
	m := linksSection.FindStringSubmatchIndex(md)
	if m == nil {
		return md
	}
	body, section := md[:m[0]], md[m[2]:m[3]]
	local := map[string]int{}
	var order []string
	for _, line := range strings.Split(strings.TrimRight(section, "\n"), "\n") {
		if lm := noteLine.FindStringSubmatch(line); lm != nil {
			local[lm[1]] = n.number(lm[2])
			order = append(order, lm[2])
		}
	}
	body = eachText(body, func(text string) string {
		return footnoteRef.ReplaceAllStringFunc(text, func(ref string) string {
			if k, ok := local[footnoteRef.FindStringSubmatch(ref)[1]]; ok {
				return "[^" + strconv.Itoa(k) + "]"
			}
			return ref
		})
	})
	var b strings.Builder
	b.WriteString(body + "\n## Links\n")
	for _, u := range order {
		b.WriteString("\n[^" + strconv.Itoa(n.num[u]) + "]: " + u)
	}
	return b.String()
}
