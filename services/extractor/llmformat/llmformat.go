// Package llmformat writes a page as compact context for a language model:
// a header of title, URL and one line of metadata, then the content with
// its links as numbered citations and without the markup that only
// decorates (emphasis, rules, image URLs).
package llmformat

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"distill.dev/services/extractor/blocks"
	"distill.dev/services/extractor/citations"
	"distill.dev/services/extractor/markdown"
)

// Page is what the header says about a page.
type Page struct {
	Title, URL string
	// Facts are the metadata line's label and value pairs, in order;
	// empty values are left out.
	Facts [][2]string
}

// Header is the page's header: title, URL and the metadata line.
func Header(p Page) string {
	var lines []string
	if p.Title != "" {
		lines = append(lines, "# "+p.Title)
	}
	if p.URL != "" {
		lines = append(lines, "URL: "+p.URL)
	}
	var facts []string
	for _, f := range p.Facts {
		if v := strings.TrimSpace(f[1]); v != "" {
			facts = append(facts, f[0]+": "+v)
		}
	}
	if len(facts) > 0 {
		lines = append(lines, strings.Join(facts, " | "))
	}
	return strings.Join(lines, "\n")
}

// Body is md without decorative markup and, when the title heads it, its
// first heading (the header has it); links are left for citations.
func Body(md, title string) string {
	bs := blocks.Parse(md)
	if len(bs) > 0 && bs[0].Kind == blocks.Heading && title != "" && strings.EqualFold(bs[0].HeadingText(), title) {
		bs = bs[1:]
	}
	kept := bs[:0]
	for _, b := range bs {
		switch b.Kind {
		case blocks.Rule:
			continue
		case blocks.Code:
		default:
			b.Text = plain(b.Text)
			if strings.TrimSpace(b.Text) == "" {
				continue
			}
		}
		kept = append(kept, b)
	}
	return blocks.Join(kept)
}

// Format writes the page: header, body with citations, and the "## Links"
// section.
func Format(p Page, md string, page *url.URL) string {
	body := citations.Apply(Body(md, p.Title), page)
	head := Header(p)
	switch {
	case head == "":
		return body
	case body == "":
		return head
	}
	return head + "\n\n" + body
}

var (
	// image is a Markdown image; its URL is of no use to a model reading
	// text, its alt is.
	image = regexp.MustCompile(`!\[([^\]]*)\]\([^)]*\)`)
	// strong and em are emphasis around text that does not start or end
	// with a space; underscores only at word edges, so snake_case stays.
	strong     = regexp.MustCompile(`\*\*([^*\s](?:[^*]*[^*\s])?)\*\*`)
	strongU    = regexp.MustCompile(`(^|[^\w])__([^_\s](?:[^_]*[^_\s])?)__([^\w]|$)`)
	em         = regexp.MustCompile(`(^|[^*\w])\*([^*\s](?:[^*]*[^*\s])?)\*([^*\w]|$)`)
	emU        = regexp.MustCompile(`(^|[^\w])_([^_\s](?:[^_]*[^_\s])?)_([^\w]|$)`)
	codeSpanRe = regexp.MustCompile("`[^`]*`")
	// placeholder stands for a code span while emphasis is stripped.
	placeholder = regexp.MustCompile("\x00[0-9]+\x00")
)

// plain strips emphasis and image URLs from a block of text, leaving its
// code spans alone.
func plain(s string) string {
	var spans []string
	s = codeSpanRe.ReplaceAllStringFunc(s, func(c string) string {
		spans = append(spans, c)
		return "\x00" + strconv.Itoa(len(spans)-1) + "\x00"
	})
	s = image.ReplaceAllStringFunc(s, func(m string) string {
		alt := strings.TrimSpace(image.FindStringSubmatch(m)[1])
		if alt == "" {
			return ""
		}
		return "(image: " + alt + ")"
	})
	s = strong.ReplaceAllString(s, "$1")
	s = strongU.ReplaceAllString(s, "$1$2$3")
	s = em.ReplaceAllString(s, "$1$2$3")
	s = emU.ReplaceAllString(s, "$1$2$3")
	// One pass puts the code spans back: one replacement per span would
	// cost the block's length per span.
	s = placeholder.ReplaceAllStringFunc(s, func(m string) string {
		i, err := strconv.Atoi(m[1 : len(m)-1])
		if err != nil || i >= len(spans) {
			return m
		}
		return spans[i]
	})
	return markdown.Tidy(s)
}
