package extract

import (
	"regexp"
	"strings"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// Content lengths, in runes, below which a page counts as low content.
const (
	// A page that runs scripts and shows less than this probably builds
	// its content in the browser.
	lowContentRunes = 200
	// An empty app root or a JavaScript notice counts only on a page that
	// shows less than this; an article with a comment widget's notice is
	// fine.
	thinContentRunes = 1000
)

// signals are what the whole page says about needing a browser, read
// before the content is chosen.
type signals struct {
	scripts      bool // the page runs scripts
	emptyAppRoot bool // a client-side app's mount point is empty
	jsNotice     bool // the page asks for JavaScript
	challenge    bool // a bot challenge or interstitial
}

// lowContent reports whether content of n runes, on this page, is too
// little to be useful as fetched.
func (s signals) lowContent(n int) bool {
	switch {
	case s.challenge:
		return true
	case s.scripts && n < lowContentRunes:
		return true
	case (s.emptyAppRoot || s.jsNotice) && n < thinContentRunes:
		return true
	}
	return false
}

// Reasons a page is low content, as ExtractResponse.low_content_reason
// names them.
const (
	reasonChallenge = "challenge"
	reasonJSApp     = "js_app"
)

// lowContentReason names why content of n runes on this page is low
// content, or returns "" when it is not.
func (s signals) lowContentReason(n int) string {
	switch {
	case !s.lowContent(n):
		return ""
	case s.challenge:
		return reasonChallenge
	default:
		return reasonJSApp
	}
}

// appRootIDs are the mount points of client-side frameworks.
var appRootIDs = map[string]bool{
	"root": true, "app": true, "__next": true, "__nuxt": true, "___gatsby": true,
	"svelte": true, "app-root": true, "application": true, "main-app": true,
}

// maxAppRootID is the length of the longest of appRootIDs.
const maxAppRootID = len("application")

var (
	jsNoticeRe = regexp.MustCompile(`(?i)(enable|turn on|activate|allow) javascript|javascript (is )?(required|disabled|must be enabled|needs to be enabled)|requires javascript|need javascript|without javascript|javascript to (run|view|use|continue)`)
	// challengeTitleRe matches the titles of bot-challenge interstitials.
	challengeTitleRe = regexp.MustCompile(`(?i)^(just a moment\.*|attention required!? \| cloudflare|checking your browser.*|please wait\.*|ddos-guard|one more step|access denied|are you a robot\??|human verification|verifying you are human.*)$`)
	// challengeHints are ids and classes of challenge pages.
	challengeHints = []string{"cf-challenge", "cf-browser-verification", "challenge-running", "challenge-form", "cf-im-under-attack", "px-captcha", "captcha-delivery", "ddos-guard"}
)

func readSignals(doc *html.Node) signals {
	var s signals
	if t := htmlnode.First(doc, "title"); t != nil && challengeTitleRe.MatchString(htmlnode.CollapseSpace(htmlnode.Text(t))) {
		s.challenge = true
	}
	htmlnode.Walk(doc, func(n *html.Node) bool {
		switch n.Type {
		case html.ElementNode:
		case html.TextNode:
			// With scripting on, the parser keeps noscript content as raw
			// text, which is where JavaScript notices live.
			if !s.jsNotice && n.Parent != nil && n.Parent.Data != "script" && n.Parent.Data != "style" && mentionsJavaScript(n.Data) && jsNoticeRe.MatchString(n.Data) {
				s.jsNotice = true
			}
			return false
		default:
			return true
		}
		switch n.Data {
		case "script":
			if isExecutable(htmlnode.Attr(n, "type")) {
				s.scripts = true
			}
			return false
		case "style", "template":
			return false
		case "app-root":
			if n.FirstChild == nil {
				s.emptyAppRoot = true
			}
		}
		for _, a := range n.Attr {
			if a.Key != "id" && a.Key != "class" {
				continue
			}
			if namesChallenge(a.Val) {
				s.challenge = true
			}
			if a.Key != "id" {
				continue
			}
			if id := strings.TrimSpace(a.Val); id != "" && len(id) <= maxAppRootID && appRootIDs[strings.ToLower(id)] && htmlnode.TextLen(n) == 0 && htmlnode.First(n, "img", "video", "canvas") == nil {
				s.emptyAppRoot = true
			}
		}
		return true
	})
	return s
}

// namesChallenge reports whether an id or class names a challenge page's
// parts, in any case. It runs on every element, so it compares in place
// rather than lowering v, and only where a name's first letter stands.
func namesChallenge(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i] | 0x20
		if c != 'c' && c != 'p' && c != 'd' {
			continue
		}
		for _, h := range challengeHints {
			if h[0] == c && len(v)-i >= len(h) && strings.EqualFold(v[i:i+len(h)], h) {
				return true
			}
		}
	}
	return false
}

// mentionsJavaScript is a cheap test that every match of jsNoticeRe
// passes: the regexp is slow, and most of a page's text nodes never name
// JavaScript.
func mentionsJavaScript(s string) bool {
	const word = "javascript"
	// A 'j' is rare in text, and found fast in either case.
	for _, j := range []byte{'j', 'J'} {
		for from := 0; from+len(word) <= len(s); {
			i := strings.IndexByte(s[from:], j)
			if i < 0 {
				break
			}
			at := from + i
			if at+len(word) <= len(s) && strings.EqualFold(s[at:at+len(word)], word) {
				return true
			}
			from = at + 1
		}
	}
	return false
}

// isExecutable reports whether a script type is run by the browser, as
// opposed to a data block such as JSON-LD.
func isExecutable(typ string) bool {
	typ = strings.ToLower(strings.TrimSpace(typ))
	switch typ {
	case "", "module", "text/javascript", "application/javascript", "text/ecmascript", "application/ecmascript", "text/jsx", "text/babel":
		return true
	}
	return false
}
