package extract

import (
	"bytes"
	"encoding/json"
	"net/url"
	"path"
	"strings"
)

// pageKind is how a media type is distilled.
type pageKind int

const (
	kindUnsupported pageKind = iota
	kindHTML
	kindText // returned as it is
	kindJSON // returned pretty-printed in a fence
	kindPDF  // read by package pdf
)

func kindOf(mediaType string) pageKind {
	switch mediaType {
	case "", "text/html", "application/xhtml+xml":
		return kindHTML
	case "text/plain", "text/markdown", "text/x-markdown", "text/csv", "text/xml", "application/xml":
		return kindText
	case "application/json", "text/json":
		return kindJSON
	}
	switch {
	case strings.HasSuffix(mediaType, "+json"):
		return kindJSON
	case strings.HasSuffix(mediaType, "+xml"):
		return kindText
	}
	return kindUnsupported
}

// fromText distils a document that is already text: its markdown is the
// text itself, JSON pretty-printed in a fence, and its title the last
// segment of its URL.
func fromText(kind pageKind, body []byte, u *url.URL) page {
	text := strings.TrimSpace(string(body))
	md := text
	if kind == kindJSON {
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, []byte(text), "", "  "); err == nil {
			text = pretty.String()
			md = "```json\n" + text + "\n```"
		}
	}
	return page{
		title:    urlTitle(u),
		markdown: md,
		text:     text,
		// The whole document is returned whatever the profile asked.
		profile: profileFull,
	}
}

// urlTitle names a document by the last segment of its URL path, or by its
// host when the path has none.
func urlTitle(u *url.URL) string {
	p := strings.TrimSuffix(u.Path, "/")
	if base := path.Base(p); p != "" && base != "/" && base != "." {
		return base
	}
	return u.Host
}
