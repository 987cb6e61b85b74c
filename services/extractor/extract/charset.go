package extract

import (
	"bytes"
	"regexp"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// headScanLimit bounds how far into a page decode looks for a <meta>
// charset. The HTML standard's prescan stops at 1024 bytes, but browsers
// honour a declaration anywhere in the head (Firefox by reloading, Chromium
// by scanning on), and pages that put one after long <link>, og: or inline
// style blocks are common enough to matter.
const headScanLimit = 64 << 10

// decode returns a page as UTF-8. Its encoding is, in order: the one its
// byte order mark names; the Content-Type's charset; for XML types, the
// XML declaration's; for HTML, a <meta charset> or <meta
// http-equiv="Content-Type"> in the head; UTF-8 when the bytes are (nearly
// all) valid UTF-8; otherwise windows-1252, the web's fallback. Like x/net's
// DetermineEncoding, the sniffing tells UTF-8 from windows-1252 and nothing
// else, so an undeclared page in another legacy charset (windows-1251,
// Shift_JIS, GB18030) reads as windows-1252.
//
// One exception: bytes that are valid UTF-8 and not plain ASCII stay UTF-8
// whatever was declared. A server or template declaring a stale charset
// over UTF-8 content is common; legacy text that happens to form valid
// UTF-8 is vanishingly rare. A UTF-16 declaration is always honoured, as
// UTF-16 text of ASCII characters is valid UTF-8 too.
func decode(b []byte, contentType string) []byte {
	if enc, size := bomEncoding(b); enc != nil {
		return decodeWith(enc, b[size:])
	}
	mt, declared := mediaType(contentType)
	enc, name := charset.Lookup(declared)
	if enc == nil && strings.Contains(mt, "xml") {
		enc, name = xmlCharset(b)
	}
	if enc == nil && kindOf(mt) == kindHTML {
		enc, name = metaCharset(b[:min(len(b), headScanLimit)])
	}
	ascii, valid := utf8State(b)
	switch {
	case valid && name == "utf-8":
		// Decoding would copy the page twice to give back the same bytes.
		return b
	case enc != nil && (ascii || strings.HasPrefix(name, "utf-16")):
		// ASCII bytes may still be a 7-bit encoding such as ISO-2022-JP.
		return decodeWith(enc, b)
	case valid:
		return b
	case enc != nil:
		return decodeWith(enc, b)
	case mostlyUTF8(b):
		return bytes.ToValidUTF8(b, []byte("\uFFFD"))
	}
	return decodeWith(charmap.Windows1252, b)
}

// bomEncoding returns the encoding a byte order mark names and the mark's
// length, or nil.
func bomEncoding(b []byte) (encoding.Encoding, int) {
	switch {
	case bytes.HasPrefix(b, []byte("\xef\xbb\xbf")):
		return encoding.Nop, 3
	case bytes.HasPrefix(b, []byte("\xfe\xff")):
		return unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM), 2
	case bytes.HasPrefix(b, []byte("\xff\xfe")):
		return unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM), 2
	}
	return nil, 0
}

// decodeWith decodes b, replacing what enc cannot map with U+FFFD.
func decodeWith(enc encoding.Encoding, b []byte) []byte {
	if enc == encoding.Nop {
		return bytes.ToValidUTF8(b, []byte("\uFFFD"))
	}
	out, err := enc.NewDecoder().Bytes(b)
	if err != nil {
		return bytes.ToValidUTF8(b, []byte("\uFFFD"))
	}
	return bytes.ToValidUTF8(out, []byte("\uFFFD"))
}

// utf8State reports whether b is plain ASCII and whether it is valid
// UTF-8.
func utf8State(b []byte) (ascii, valid bool) {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false, utf8.Valid(b)
		}
	}
	return true, true
}

// mostlyUTF8 reports whether b is UTF-8 with a few stray bytes, as when a
// template pastes in a legacy-encoded snippet: at least 80% of its
// non-ASCII sequences decode. Legacy text seldom forms a valid multi-byte
// sequence, so its share is near 0.
func mostlyUTF8(b []byte) bool {
	var good, bad int
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			bad++
		} else {
			good++
		}
		i += size
	}
	return good > 0 && good >= 4*bad
}

// metaCharset returns the encoding the first <meta> that declares one
// names, as the HTML standard's prescan reads it: charset="..." or
// http-equiv="content-type" with content="...; charset=...". Like the
// prescan it takes any <meta> in the first 1024 bytes; past them, only one
// still in the head. A declared UTF-16 means UTF-8: a page whose meta could
// be read as ASCII is not UTF-16.
func metaCharset(b []byte) (encoding.Encoding, string) {
	const prescanLimit = 1024
	z := html.NewTokenizer(bytes.NewReader(b))
	read := 0
	for {
		tt := z.Next()
		read += len(z.Raw())
		switch tt {
		case html.ErrorToken:
			return nil, ""
		case html.EndTagToken:
			if tag, _ := z.TagName(); string(tag) == "head" && read > prescanLimit {
				return nil, ""
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			tag, hasAttr := z.TagName()
			if string(tag) != "meta" {
				if !inHead[string(tag)] && read > prescanLimit {
					return nil, ""
				}
				continue
			}
			var label, content string
			pragma, seen := false, map[string]bool{}
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				key := string(k)
				if seen[key] {
					continue
				}
				seen[key] = true
				switch key {
				case "charset":
					label = string(v)
				case "http-equiv":
					pragma = strings.EqualFold(string(v), "content-type")
				case "content":
					content = string(v)
				}
			}
			if label == "" && pragma {
				label = contentCharset(content)
			}
			if label == "" {
				continue
			}
			enc, name := charset.Lookup(label)
			if enc == nil {
				continue
			}
			if strings.HasPrefix(name, "utf-16") {
				return encoding.Nop, "utf-8"
			}
			return enc, name
		}
	}
}

// inHead are the elements a head holds, and html and head themselves.
var inHead = map[string]bool{
	"html": true, "head": true, "meta": true, "title": true, "link": true, "style": true,
	"script": true, "noscript": true, "base": true, "template": true,
}

// contentCharset extracts the charset from a meta content attribute, as
// the HTML standard's "algorithm for extracting a character encoding from a
// meta element" does.
func contentCharset(s string) string {
	lower := strings.ToLower(s)
	for {
		i := strings.Index(lower, "charset")
		if i < 0 {
			return ""
		}
		lower, s = lower[i+len("charset"):], s[i+len("charset"):]
		rest := strings.TrimLeft(s, " \t\n\f\r")
		if !strings.HasPrefix(rest, "=") {
			continue
		}
		rest = strings.TrimLeft(rest[1:], " \t\n\f\r")
		if rest == "" {
			return ""
		}
		if q := rest[0]; q == '"' || q == '\'' {
			end := strings.IndexByte(rest[1:], q)
			if end < 0 {
				return ""
			}
			return rest[1 : 1+end]
		}
		if end := strings.IndexAny(rest, "; \t\n\f\r"); end >= 0 {
			return rest[:end]
		}
		return rest
	}
}

var xmlDeclEncoding = regexp.MustCompile(`^<\?xml\s[^>]*?\bencoding\s*=\s*["']([A-Za-z0-9._:-]+)["']`)

// xmlCharset returns the encoding an XML declaration names, or nil.
func xmlCharset(b []byte) (encoding.Encoding, string) {
	m := xmlDeclEncoding.FindSubmatch(b[:min(len(b), 256)])
	if m == nil {
		return nil, ""
	}
	return charset.Lookup(string(m[1]))
}
