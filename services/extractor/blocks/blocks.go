// Package blocks reads distilled Markdown back as the blocks it was written
// in: headings, paragraphs, lists, tables, code blocks and quotes, each with
// the headings in effect above it. The reading tools (query, chunks, diff)
// work on whole blocks, so a cut never falls inside a table row or a code
// fence by accident.
//
// It reads the Markdown distill writes (blank lines between blocks, GFM
// tables, fenced code), not every CommonMark construct: a block is what
// lies between blank lines outside code fences, and a heading line is a
// block of its own.
package blocks

import (
	"strings"

	"distill.dev/services/extractor/markdown"
)

// Kind is what a block is.
type Kind int

// The kinds of block.
const (
	Paragraph Kind = iota
	Heading
	List
	Table
	Code
	Quote
	Rule
)

var kindNames = [...]string{"paragraph", "heading", "list", "table", "code", "quote", "rule"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "block"
}

// Block is one block of Markdown.
type Block struct {
	Kind Kind
	// Text is the block's Markdown, without the blank lines around it.
	Text string
	// Level is a heading's level, 1 to 6; 0 for other blocks.
	Level int
	// Path is the text of the headings in effect at the block, outermost
	// first; a heading's path ends with itself.
	Path []string
	// Fence is a code block's opening fence line (```go), "" otherwise.
	Fence string
}

// HeadingText returns a heading's text without its # marks.
func (b Block) HeadingText() string {
	return strings.TrimSpace(strings.TrimLeft(b.Text, "#"))
}

// Parse splits md into blocks, in order.
func Parse(md string) []Block {
	var out []Block
	var path []headingRef
	var cur []string
	fence := ""
	flush := func() {
		if len(cur) == 0 {
			return
		}
		text := strings.Join(cur, "\n")
		cur = cur[:0]
		if strings.TrimSpace(text) == "" {
			return
		}
		b := Block{Text: text, Kind: kindOf(text)}
		if b.Kind == Code {
			b.Fence = strings.TrimSpace(strings.SplitN(text, "\n", 2)[0])
		}
		b.Path = pathText(path)
		out = append(out, b)
	}
	for _, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			cur = append(cur, line)
			if markdown.ClosesFence(trimmed, fence) {
				fence = ""
				flush()
			}
			continue
		}
		if f := FenceOf(trimmed); f != "" {
			flush()
			fence = f
			cur = append(cur, line)
			continue
		}
		if trimmed == "" {
			flush()
			continue
		}
		if level := headingLevel(trimmed); level > 0 {
			flush()
			for len(path) > 0 && path[len(path)-1].level >= level {
				path = path[:len(path)-1]
			}
			h := Block{Kind: Heading, Text: trimmed, Level: level}
			path = append(path, headingRef{level: level, text: h.HeadingText()})
			h.Path = pathText(path)
			out = append(out, h)
			continue
		}
		cur = append(cur, line)
	}
	// An unclosed fence runs to the end, as CommonMark reads it.
	flush()
	return out
}

type headingRef struct {
	level int
	text  string
}

func pathText(path []headingRef) []string {
	if len(path) == 0 {
		return nil
	}
	out := make([]string, len(path))
	for i, h := range path {
		out[i] = h.text
	}
	return out
}

func kindOf(text string) Kind {
	first := strings.TrimSpace(strings.SplitN(text, "\n", 2)[0])
	switch {
	case FenceOf(first) != "":
		return Code
	case strings.HasPrefix(first, "|"):
		return Table
	case strings.HasPrefix(first, ">"):
		return Quote
	case isRule(first):
		return Rule
	case isListItem(first):
		return List
	}
	return Paragraph
}

// FenceOf returns the fence a trimmed line opens (``` or ~~~, or longer),
// or "".
func FenceOf(trimmed string) string {
	for _, ch := range []byte{'`', '~'} {
		n := 0
		for n < len(trimmed) && trimmed[n] == ch {
			n++
		}
		if n >= 3 && (ch == '~' || !strings.ContainsRune(trimmed[n:], '`')) {
			return trimmed[:n]
		}
	}
	return ""
}

func headingLevel(trimmed string) int {
	n := 0
	for n < len(trimmed) && trimmed[n] == '#' {
		n++
	}
	if n >= 1 && n <= 6 && (n == len(trimmed) || trimmed[n] == ' ') {
		return n
	}
	return 0
}

func isRule(trimmed string) bool {
	if len(trimmed) < 3 {
		return false
	}
	c := trimmed[0]
	if c != '-' && c != '*' && c != '_' {
		return false
	}
	return strings.Trim(trimmed, string(c)+" ") == ""
}

// isListItem reports whether a trimmed line starts a list item: "- ",
// "* ", "+ " or "1. ", "1) ".
func isListItem(trimmed string) bool {
	if len(trimmed) >= 2 && strings.ContainsRune("-*+", rune(trimmed[0])) && trimmed[1] == ' ' {
		return true
	}
	n := 0
	for n < len(trimmed) && n < 9 && trimmed[n] >= '0' && trimmed[n] <= '9' {
		n++
	}
	return n > 0 && n+1 < len(trimmed) && (trimmed[n] == '.' || trimmed[n] == ')') && trimmed[n+1] == ' '
}

// IsTableDelimiter reports whether a trimmed line is a GFM table's
// delimiter row, | --- | :-: |.
func IsTableDelimiter(trimmed string) bool {
	return strings.Contains(trimmed, "-") && strings.Trim(trimmed, "|-: ") == ""
}

// TableHeader returns a table block's header: its header row and
// delimiter row, or "" when the block has no delimiter row.
func TableHeader(text string) string {
	lines := strings.SplitN(text, "\n", 3)
	if len(lines) >= 2 && IsTableDelimiter(strings.TrimSpace(lines[1])) {
		return lines[0] + "\n" + lines[1]
	}
	return ""
}

// Join writes blocks back as Markdown, a blank line between each.
func Join(bs []Block) string {
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = b.Text
	}
	return strings.Join(parts, "\n\n")
}
