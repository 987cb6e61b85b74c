package extract

import (
	"bytes"
	"io"
	"slices"
	"strings"
)

// elision says what elideCode cuts besides the bodies of scripts.
type elision struct {
	// styles cuts the style sheets' bodies.
	styles bool
	// drawings cuts what inline SVG drawings hold (paths, shapes, their
	// titles), keeping the svg elements and their attributes.
	drawings bool
}

// elided is a page with parts cut out of it: the ranges of src kept, in
// order. It is read in place, so cutting copies nothing.
type elided struct {
	src  []byte
	keep [][2]int
}

// whole is b with nothing cut.
func whole(b []byte) elided {
	return elided{src: b, keep: [][2]int{{0, len(b)}}}
}

// reader reads what is kept.
func (e elided) reader() io.Reader {
	return &keptReader{src: e.src, keep: slices.Clone(e.keep)}
}

// bytes joins what is kept: src itself when nothing was cut.
func (e elided) bytes() []byte {
	if len(e.keep) == 1 && e.keep[0] == [2]int{0, len(e.src)} {
		return e.src
	}
	n := 0
	for _, k := range e.keep {
		n += k[1] - k[0]
	}
	out := make([]byte, 0, n)
	for _, k := range e.keep {
		out = append(out, e.src[k[0]:k[1]]...)
	}
	return out
}

type keptReader struct {
	src  []byte
	keep [][2]int
}

func (r *keptReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && len(r.keep) > 0 {
		k := &r.keep[0]
		c := copy(p[n:], r.src[k[0]:k[1]])
		n += c
		if k[0] += c; k[0] == k[1] {
			r.keep = r.keep[1:]
		}
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// elideCode returns b without the bodies of its scripts and, as cuts
// says, of its style sheets and SVG drawings: nothing distils them, and
// on the modern web they are a third of a page's bytes, which the parser
// would otherwise read a byte at a time and copy into the tree. The
// elements stay, empty, so the tree is the one the parser builds from b
// but for their content. JSON-LD, which the metadata, the page type and
// the brand read, keeps its body; a framework's state in a JSON block
// does not.
//
// It follows the tokenizer of golang.org/x/net/html through text, tags,
// attributes and comments, so that a "<script" inside an attribute or a
// comment is not taken for a tag. Inside SVG and MathML, where the parser
// reads a script's or a style's text as markup, no script or style is
// cut. Where the two could disagree (a script with an escaped "<!--" part,
// a CDATA section) it elides nothing more and passes the rest of b as it
// is. b itself is never modified.
func elideCode(b []byte, cuts elision) elided {
	z := elider{b: b, cuts: cuts, out: elided{src: b}}
	for i := 0; ; {
		lt := bytes.IndexByte(b[i:], '<')
		if lt < 0 || i+lt+1 >= len(b) {
			return z.finish()
		}
		i += lt + 1
		var next scanned
		switch c := b[i]; {
		case isASCIILetter(c):
			i, next = z.startTag(i)
		case c == '/':
			i, next = z.endTag(i)
		default:
			i, next = skipMarkup(b, i)
		}
		switch next {
		case scanStop:
			return z.finish()
		case scanAgain:
			// A frameset replaces the body only while the page has shown
			// no text, which a drawing's text counts as.
			return elideCode(b, elision{styles: cuts.styles})
		}
	}
}

// scanned says how a scan goes on after a tag.
type scanned int

const (
	scanOn    scanned = iota
	scanStop          // elide nothing more
	scanAgain         // start again, cutting no drawings
)

// elider is elideCode's state as it reads b.
type elider struct {
	b    []byte
	cuts elision
	out  elided
	kept int // b[:kept] is decided
	// drawingCut is set once a drawing was cut.
	drawingCut bool
	// foreign counts the svg and math elements open: inside them the
	// parser reads a style or script as markup, so nothing is cut there.
	foreign int
	// In a select the parser drops an svg's tags and keeps its text; it is
	// taken to last until its end tag, though other tags may end it sooner.
	inSelect bool
}

// cut leaves b[from:to] out.
func (z *elider) cut(from, to int) {
	if from > z.kept {
		z.out.keep = append(z.out.keep, [2]int{z.kept, from})
	}
	z.kept = to
}

// finish keeps the rest of b.
func (z *elider) finish() elided {
	if z.kept < len(z.b) || len(z.out.keep) == 0 {
		z.out.keep = append(z.out.keep, [2]int{z.kept, len(z.b)})
	}
	return z.out
}

// startTag reads the start tag whose name starts at b[i], and the text of
// a raw text element it opens, cutting what the elision says.
func (z *elider) startTag(i int) (int, scanned) {
	b := z.b
	nameEnd, end, ok := scanTag(b, i)
	if !ok {
		return 0, scanStop
	}
	name := b[i:nameEnd]
	tag := b[nameEnd:end]
	i = end
	switch {
	case isForeignRoot(name) && !bytes.HasSuffix(tag, []byte("/>")):
		if z.cuts.drawings && z.foreign == 0 && !z.inSelect && strings.EqualFold(string(name), "svg") {
			if close, ok := drawingEnd(b, i); ok {
				z.cut(i, close)
				z.drawingCut = true
				i = close
			}
		}
		z.foreign++
	case strings.EqualFold(string(name), "select"):
		z.inSelect = true
	case strings.EqualFold(string(name), "frameset"):
		if z.drawingCut {
			return 0, scanAgain
		}
		z.cuts.drawings = false
	}
	raw := rawTextTag(name)
	switch raw {
	case "":
		return i, scanOn
	case "plaintext":
		return 0, scanStop
	}
	close, ok := rawTextEnd(b, i, raw)
	if !ok {
		return 0, scanStop
	}
	if z.foreign == 0 && (raw == "script" && !linkedData(tagAttr(tag, "type")) || raw == "style" && z.cuts.styles) {
		z.cut(i, close)
	}
	return close, scanOn
}

// endTag reads what follows the "<" of "</" at b[i].
func (z *elider) endTag(i int) (int, scanned) {
	name, end, ok := scanEndTag(z.b, i+1)
	if !ok {
		return 0, scanStop
	}
	if isForeignRoot(name) && z.foreign > 0 {
		z.foreign--
	}
	if strings.EqualFold(string(name), "select") {
		z.inSelect = false
	}
	return end, scanOn
}

// skipMarkup reads past a declaration (a comment, a doctype) or a
// processing instruction after the "<" at b[i]; anything else is text.
func skipMarkup(b []byte, i int) (int, scanned) {
	switch b[i] {
	case '!':
		end, ok := scanDeclaration(b, i+1)
		if !ok {
			return 0, scanStop
		}
		return end, scanOn
	case '?':
		gt := bytes.IndexByte(b[i:], '>')
		if gt < 0 {
			return 0, scanStop
		}
		return i + gt + 1, scanOn
	}
	return i, scanOn
}

// drawingEnd returns where the body of the svg element whose start tag
// ends at b[i] ends, at the "<" of its end tag, when the parser builds
// nothing from that body but the svg's descendants: no tag in it breaks
// out into HTML, no HTML integration point (title, desc, foreignObject)
// holds a tag, which the parser would read as HTML, and every end tag
// closes an element opened inside. Otherwise, or when b ends first, it
// returns false.
func drawingEnd(b []byte, i int) (int, bool) {
	var open [16][]byte // the elements open inside the svg, outermost first
	depth := 0
	for {
		lt := bytes.IndexByte(b[i:], '<')
		if lt < 0 || i+lt+1 >= len(b) {
			return 0, false
		}
		at := i + lt
		i = at + 1
		switch c := b[i]; {
		case isASCIILetter(c):
			nameEnd, end, ok := scanTag(b, i)
			if !ok {
				return 0, false
			}
			name := b[i:nameEnd]
			if depth > 0 && integrationPoint(open[depth-1]) || leavesSVG(name) {
				return 0, false
			}
			i = end
			if !bytes.HasSuffix(b[nameEnd:end], []byte("/>")) {
				if depth == len(open) {
					return 0, false // deeper than drawings go
				}
				open[depth] = name
				depth++
			}
		case c == '/':
			name, end, ok := scanEndTag(b, i+1)
			if !ok {
				return 0, false
			}
			if name != nil {
				switch k := innermost(open[:depth], name); {
				case k >= 0:
					depth = k
				case bytes.EqualFold(name, []byte("svg")):
					return at, true
				default:
					return 0, false // closes what the drawing did not open
				}
			}
			i = end
		default:
			var next scanned
			if i, next = skipMarkup(b, i); next == scanStop {
				return 0, false
			}
		}
	}
}

// innermost returns the index of the innermost element of open named
// name, or -1.
func innermost(open [][]byte, name []byte) int {
	k := len(open) - 1
	for k >= 0 && !bytes.EqualFold(open[k], name) {
		k--
	}
	return k
}

// integrationPoint reports whether an SVG element's content is read as
// HTML.
func integrationPoint(name []byte) bool {
	return bytes.EqualFold(name, []byte("title")) || bytes.EqualFold(name, []byte("desc")) || bytes.EqualFold(name, []byte("foreignobject"))
}

// leavesSVG reports whether a start tag inside an svg could be read as
// HTML: the tags that break out of foreign content (a font with some
// attributes among them), and MathML, whose text elements hold HTML.
func leavesSVG(name []byte) bool {
	if len(name) > len("blockquote") {
		return false
	}
	var lower [len("blockquote")]byte
	for i, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	return breakout[string(lower[:len(name)])]
}

// breakout are the start tags that end foreign content, as the parser has
// them, with font and math added.
var breakout = map[string]bool{
	"b": true, "big": true, "blockquote": true, "body": true, "br": true, "center": true,
	"code": true, "dd": true, "div": true, "dl": true, "dt": true, "em": true, "embed": true,
	"h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "head": true,
	"hr": true, "i": true, "img": true, "li": true, "listing": true, "menu": true, "meta": true,
	"nobr": true, "ol": true, "p": true, "pre": true, "ruby": true, "s": true, "small": true,
	"span": true, "strong": true, "strike": true, "sub": true, "sup": true, "table": true,
	"tt": true, "u": true, "ul": true, "var": true, "font": true, "math": true,
}

// linkedData reports whether a script's type may name JSON-LD: it does
// when any reader of JSON-LD takes it for that, and a type written with a
// character reference, which tagAttr leaves unread, may.
func linkedData(typ string) bool {
	const ld = "ld+json"
	for i := 0; i+len(ld) <= len(typ); i++ {
		if strings.EqualFold(typ[i:i+len(ld)], ld) {
			return true
		}
	}
	return typ == "&"
}

func isForeignRoot(name []byte) bool {
	return strings.EqualFold(string(name), "svg") || strings.EqualFold(string(name), "math")
}

func isASCIILetter(c byte) bool {
	return 'a' <= c|0x20 && c|0x20 <= 'z'
}

func isHTMLSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f'
}

// scanTag reads a tag whose name starts at b[i], as the tokenizer reads
// it, and returns where the name ends, where the tag ends (after its
// '>'), and false when b ends first.
func scanTag(b []byte, i int) (nameEnd, end int, ok bool) {
	i++
	for i < len(b) && !isHTMLSpace(b[i]) && b[i] != '/' && b[i] != '>' {
		i++
	}
	nameEnd = i
	for {
		i = skipHTMLSpace(b, i)
		if i >= len(b) {
			return 0, 0, false
		}
		if b[i] == '>' {
			return nameEnd, i + 1, true
		}
		if _, _, i = scanAttr(b, i); i < 0 {
			return 0, 0, false
		}
	}
}

// scanEndTag reads what follows "</" at b[i] as the tokenizer reads it:
// "</>" is nothing, a letter starts an end tag, and anything else is a
// bogus comment up to the next '>'. It returns the end tag's name, nil
// for the others, where it ends, and false when b ends first.
func scanEndTag(b []byte, i int) (name []byte, end int, ok bool) {
	if i >= len(b) {
		return nil, 0, false
	}
	switch c := b[i]; {
	case c == '>':
		return nil, i + 1, true
	case isASCIILetter(c):
		nameEnd, end, ok := scanTag(b, i)
		if !ok {
			return nil, 0, false
		}
		return b[i:nameEnd], end, true
	}
	gt := bytes.IndexByte(b[i:], '>')
	if gt < 0 {
		return nil, 0, false
	}
	return nil, i + gt + 1, true
}

// scanAttr reads the attribute at b[i] as the tokenizer reads one, and
// returns its name, its value and where it ends, or an end of -1 when b
// ends first. A '/' between attributes reads as one with no name.
func scanAttr(b []byte, i int) (key, val []byte, end int) {
	keyStart := i
	for ; i < len(b); i++ {
		c := b[i]
		if c == '=' && i == keyStart {
			continue // an '=' first is part of the name
		}
		if c == '=' || isHTMLSpace(c) || c == '/' || c == '>' {
			break
		}
	}
	key = b[keyStart:i]
	if i = skipHTMLSpace(b, i); i >= len(b) {
		return nil, nil, -1
	}
	switch b[i] {
	case '/':
		return key, nil, i + 1
	case '=':
		i++
	default:
		return key, nil, i
	}
	if i = skipHTMLSpace(b, i); i >= len(b) {
		return nil, nil, -1
	}
	switch q := b[i]; q {
	case '>':
		return key, nil, i
	case '"', '\'':
		closing := bytes.IndexByte(b[i+1:], q)
		if closing < 0 {
			return nil, nil, -1
		}
		return key, b[i+1 : i+1+closing], i + closing + 2
	default:
		start := i
		for i < len(b) && !isHTMLSpace(b[i]) && b[i] != '>' {
			i++
		}
		return key, b[start:i], i
	}
}

func skipHTMLSpace(b []byte, i int) int {
	for i < len(b) && isHTMLSpace(b[i]) {
		i++
	}
	return i
}

// rawTextTags are the elements whose content the tokenizer reads as text
// up to their end tag.
var rawTextTags = []string{"script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript", "plaintext"}

// rawTextTag returns the lower-case name of a raw text element, or "".
func rawTextTag(name []byte) string {
	for _, t := range rawTextTags {
		if len(name) == len(t) && strings.EqualFold(string(name), t) {
			return t
		}
	}
	return ""
}

// rawTextEnd returns where the text of the raw text element tag, starting
// at b[i], ends: at its end tag's "</". A script's text holding "<!--"
// follows escaping rules this does not; false then, as when b ends first.
func rawTextEnd(b []byte, i int, tag string) (int, bool) {
	for from := i; ; {
		lt := bytes.Index(b[from:], []byte("</"))
		if lt < 0 {
			return 0, false
		}
		at := from + lt
		after := at + 2 + len(tag)
		if after < len(b) && strings.EqualFold(string(b[at+2:after]), tag) {
			if c := b[after]; isHTMLSpace(c) || c == '/' || c == '>' {
				if tag == "script" && bytes.Contains(b[i:at], []byte("<!--")) {
					return 0, false
				}
				return at, true
			}
		}
		from = at + 2
	}
}

// scanDeclaration reads what follows "<!" at b[i]: a comment, a doctype
// or a bogus comment, as the tokenizer ends them, and returns where it
// ends. A CDATA section, which the parser reads differently in SVG and
// MathML, and a comment b ends in, give false.
func scanDeclaration(b []byte, i int) (int, bool) {
	if bytes.HasPrefix(b[i:], []byte("[CDATA[")) {
		return 0, false
	}
	if !bytes.HasPrefix(b[i:], []byte("--")) {
		gt := bytes.IndexByte(b[i:], '>')
		if gt < 0 {
			return 0, false
		}
		return i + gt + 1, true
	}
	// A comment ends at the first '>' after two dashes or "--!", or right
	// away as "<!-->" or "<!--->".
	start := i + 2
	dashes := start // the dashes the comment's text opens with end here
	for dashes < len(b) && b[dashes] == '-' {
		dashes++
	}
	for from := start; ; {
		gt := bytes.IndexByte(b[from:], '>')
		if gt < 0 {
			return 0, false
		}
		k := from + gt
		data := b[start:k]
		if k <= dashes || bytes.HasSuffix(data, []byte("--")) || bytes.HasSuffix(data, []byte("--!")) {
			return k + 1, true
		}
		from = k + 1
	}
}

// tagAttr returns the value of the first attribute key among a tag's
// attributes, as scanTag read them (from the end of the name to the
// '>'), or "" when there is none. A value holding a character reference
// is returned as "&": the caller then sees a type it does not know.
func tagAttr(tag []byte, key string) string {
	for i := 0; ; {
		i = skipHTMLSpace(tag, i)
		if i >= len(tag) || tag[i] == '>' {
			return ""
		}
		k, v, end := scanAttr(tag, i)
		if end < 0 {
			return ""
		}
		if len(k) > 0 && strings.EqualFold(string(k), key) {
			if bytes.IndexByte(v, '&') >= 0 {
				return "&"
			}
			return string(v)
		}
		i = end
	}
}
