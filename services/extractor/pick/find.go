package pick

import (
	"context"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"

	"distill.dev/proto/failure"
	"distill.dev/services/extractor/internal/halt"
	"distill.dev/services/extractor/internal/htmlnode"
)

// compileFind turns find_text or find_regex, with exact and
// case_sensitive, into one regular expression over an element's visible
// text. Go's regular expressions run in time linear in the text, so a
// pattern's length is its only bound.
func compileFind(text, re string, exact, caseSensitive bool) (*regexp.Regexp, error) {
	option, pattern := "--find-regex", re
	if text != "" {
		// The visible text has its whitespace collapsed; so has the
		// text looked for.
		option, pattern = "--find-text", regexp.QuoteMeta(htmlnode.CollapseSpace(text))
		if pattern == "" {
			return nil, failure.New(failure.InvalidArgument, "--find-text is only whitespace")
		}
	}
	if len(pattern) > MaxPatternBytes {
		return nil, failure.New(failure.InvalidArgument, "%s: %d bytes long, over the limit of %d", option, len(pattern), MaxPatternBytes)
	}
	// The pattern as given, so that an error quotes what the user wrote.
	if _, err := regexp.Compile(pattern); err != nil {
		return nil, failure.Wrap(failure.InvalidArgument, err, "%s: invalid regular expression %s", option, quote(re))
	}
	if exact {
		pattern = `^(?:` + pattern + `)$`
	}
	if !caseSensitive {
		pattern = `(?i)` + pattern
	}
	m, err := regexp.Compile(pattern)
	if err != nil {
		return nil, failure.Wrap(failure.InvalidArgument, err, "%s: invalid regular expression %s", option, quote(re))
	}
	return m, nil
}

// pageText is the visible text of a page written once, with where each
// element's text starts and ends in it, so that every element's text is
// a slice of one string rather than a string of its own.
type pageText struct {
	buf  strings.Builder
	span map[*html.Node][2]int
	// order lists the elements in the order they close: children before
	// their parent.
	order []*html.Node
}

// readText writes the visible text under root, blocks apart and
// whitespace collapsed as visibleText does, passing over silent and
// hidden elements.
func readText(ctx context.Context, root *html.Node) (*pageText, error) {
	t := &pageText{span: map[*html.Node][2]int{}}
	tick := halt.NewTicker(ctx)
	started, space := false, false
	start := map[*html.Node]int{}
	htmlnode.WalkAround(root, func(n *html.Node) bool {
		if tick.Stop() {
			return false
		}
		switch n.Type {
		case html.ElementNode:
			if n != root && (htmlnode.Silent(n.Data) || htmlnode.IsHidden(n)) {
				return false
			}
			if !htmlnode.Inline(n.Data) {
				space = started
			}
			start[n] = t.buf.Len()
			return true
		case html.TextNode:
			data := n.Data
			for i := 0; i < len(data); {
				r, size := utf8.DecodeRuneInString(data[i:])
				if unicode.IsSpace(r) {
					space = started
					i += size
					continue
				}
				if space {
					t.buf.WriteByte(' ')
				}
				t.buf.WriteRune(r)
				started, space = true, false
				i += size
			}
			return false
		}
		return n.Type == html.DocumentNode
	}, func(n *html.Node) {
		s, ok := start[n]
		if !ok {
			return
		}
		if !htmlnode.Inline(n.Data) {
			space = started
		}
		t.span[n] = [2]int{s, t.buf.Len()}
		t.order = append(t.order, n)
	})
	if err := tick.Err("reading the page's text"); err != nil {
		return nil, err
	}
	return t, nil
}

// text is an element's visible text.
func (t *pageText) text(n *html.Node) string {
	sp := t.span[n]
	return strings.TrimSpace(t.buf.String()[sp[0]:sp[1]])
}

// find returns the deepest elements under root whose visible text m
// matches, in document order: an element none of whose children match.
// Text split by inline tags still matches, in the element that holds all
// of it.
func find(ctx context.Context, root *html.Node, m *regexp.Regexp) ([]*html.Node, *pageText, error) {
	t, err := readText(ctx, root)
	if err != nil {
		return nil, nil, err
	}
	tick := halt.NewTicker(ctx)
	// below holds the elements with a match in their subtree.
	below := map[*html.Node]bool{}
	var found []*html.Node
	for _, n := range t.order {
		if tick.Stop() {
			break
		}
		if below[n] {
			below[n.Parent] = true
			continue
		}
		if m.MatchString(t.text(n)) {
			found = append(found, n)
			below[n.Parent] = true
		}
	}
	if err := tick.Err("finding the text"); err != nil {
		return nil, nil, err
	}
	return found, t, nil
}
