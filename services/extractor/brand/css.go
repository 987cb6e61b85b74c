package brand

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// MaxCSS bounds the CSS read from one source (a style element, a linked
// stylesheet): brand colours and fonts are declared early, and a
// megabyte of CSS is already a framework's.
const MaxCSS = 512 << 10

// maxColors and maxFonts bound what a brand lists.
const (
	maxColors = 8
	maxFonts  = 6
)

// palette counts the colours and fonts of a page's styles.
type palette struct {
	colors map[string]int
	// names holds the custom property that first named a colour.
	names map[string]string
	fonts map[string]int
	// order remembers first appearance, to break ties stably.
	colorOrder, fontOrder []string
}

func newPalette() *palette {
	return &palette{colors: map[string]int{}, names: map[string]string{}, fonts: map[string]int{}}
}

var (
	declaration = regexp.MustCompile(`(--[\w-]+|[a-zA-Z-]+)\s*:\s*([^;{}]+)`)
	hexColor    = regexp.MustCompile(`#([0-9a-fA-F]{8}|[0-9a-fA-F]{6}|[0-9a-fA-F]{3,4})\b`)
	rgbColor    = regexp.MustCompile(`rgba?\(\s*(\d{1,3})[\s,]+(\d{1,3})[\s,]+(\d{1,3})(?:[\s,/]+([\d.]+%?))?\s*\)`)
	comment     = regexp.MustCompile(`(?s)/\*.*?\*/`)
)

// addCSS counts the colours and fonts of a style sheet or a style
// attribute's declarations.
func (p *palette) addCSS(css string) {
	if len(css) > MaxCSS {
		css = css[:MaxCSS]
	}
	css = comment.ReplaceAllString(css, "")
	for _, m := range declaration.FindAllStringSubmatch(css, -1) {
		prop, value := strings.ToLower(m[1]), m[2]
		switch {
		case prop == "font-family":
			if f := firstFamily(value); f != "" {
				if p.fonts[f] == 0 {
					p.fontOrder = append(p.fontOrder, f)
				}
				p.fonts[f]++
			}
		case strings.HasPrefix(prop, "--") || isColorProperty(prop):
			for _, c := range colorsIn(value) {
				if p.colors[c] == 0 {
					p.colorOrder = append(p.colorOrder, c)
				}
				p.colors[c]++
				if strings.HasPrefix(prop, "--") && p.names[c] == "" {
					p.names[c] = prop
				}
			}
		}
	}
}

func isColorProperty(prop string) bool {
	return prop == "color" || prop == "fill" || prop == "stroke" || strings.HasPrefix(prop, "background") ||
		strings.HasPrefix(prop, "border") || strings.HasSuffix(prop, "-color") || prop == "outline"
}

// colorsIn returns the colours a CSS value names, as #rrggbb; fully
// transparent ones are left out.
func colorsIn(value string) []string {
	var out []string
	for _, m := range hexColor.FindAllStringSubmatch(value, -1) {
		h := strings.ToLower(m[1])
		if len(h) == 3 || len(h) == 4 {
			if len(h) == 4 && h[3] == '0' {
				continue
			}
			h = string([]byte{h[0], h[0], h[1], h[1], h[2], h[2]})
		}
		if len(h) == 8 {
			if h[6:] == "00" {
				continue
			}
			h = h[:6]
		}
		out = append(out, "#"+h)
	}
	for _, m := range rgbColor.FindAllStringSubmatch(value, -1) {
		if a := m[4]; a == "0" || a == "0%" || a == "0.0" {
			continue
		}
		var c [3]int
		ok := true
		for i := range 3 {
			n, err := strconv.Atoi(m[i+1])
			if err != nil || n > 255 {
				ok = false
			}
			c[i] = n
		}
		if ok {
			out = append(out, fmt.Sprintf("#%02x%02x%02x", c[0], c[1], c[2]))
		}
	}
	return out
}

// genericFamilies are the families that name no brand's font.
var genericFamilies = map[string]bool{
	"serif": true, "sans-serif": true, "monospace": true, "cursive": true, "fantasy": true, "system-ui": true,
	"ui-sans-serif": true, "ui-serif": true, "ui-monospace": true, "ui-rounded": true, "emoji": true, "math": true,
	"-apple-system": true, "blinkmacsystemfont": true, "inherit": true, "initial": true, "unset": true, "revert": true,
}

// firstFamily returns the first family of a font-family value that is a
// real font rather than a generic or system one.
func firstFamily(value string) string {
	for _, f := range strings.Split(value, ",") {
		f = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f), "!important"))
		f = strings.Trim(f, `"' `)
		if f == "" || strings.HasPrefix(f, "var(") || genericFamilies[strings.ToLower(f)] {
			continue
		}
		return f
	}
	return ""
}

// gray reports whether a #rrggbb colour is white, black or a gray: the
// colours of text and backgrounds rather than of a brand.
func gray(hex string) bool {
	r, _ := strconv.ParseUint(hex[1:3], 16, 8)
	g, _ := strconv.ParseUint(hex[3:5], 16, 8)
	b, _ := strconv.ParseUint(hex[5:7], 16, 8)
	hi, lo := max(r, g, b), min(r, g, b)
	return hi-lo < 16
}

// ranked returns keys by count, most first, ties in first-appearance
// order.
func ranked(counts map[string]int, order []string) []string {
	out := slices.Clone(order)
	slices.SortStableFunc(out, func(a, b string) int { return counts[b] - counts[a] })
	return out
}
