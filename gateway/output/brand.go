package output

import (
	"fmt"
	"strings"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

type brandJSON struct {
	Name        string              `json:"name"`
	Logos       []brandImageJSON    `json:"logos"`
	Favicon     *brandImageJSON     `json:"favicon,omitempty"`
	ThemeColor  *string             `json:"theme_color,omitempty"`
	Colors      []brandColorJSON    `json:"colors"`
	Fonts       []string            `json:"fonts"`
	Social      []socialProfileJSON `json:"social"`
	Stylesheets []string            `json:"stylesheets"`
}

type brandImageJSON struct {
	URL    string `json:"url"`
	Width  *int32 `json:"width,omitempty"`
	Height *int32 `json:"height,omitempty"`
	Source string `json:"source"`
}

type brandColorJSON struct {
	Hex   string  `json:"hex"`
	Count int32   `json:"count"`
	Name  *string `json:"name,omitempty"`
}

type socialProfileJSON struct {
	Network string `json:"network"`
	URL     string `json:"url"`
}

func toBrandImageJSON(i *distillv1.BrandImage) brandImageJSON {
	return brandImageJSON{URL: i.GetUrl(), Width: i.Width, Height: i.Height, Source: i.GetSource()}
}

func toBrandJSON(b *distillv1.Brand) *brandJSON {
	out := &brandJSON{
		Name: b.GetName(), ThemeColor: b.ThemeColor, Fonts: nonNil(b.GetFonts()), Stylesheets: nonNil(b.GetStylesheets()),
		Logos: []brandImageJSON{}, Colors: []brandColorJSON{}, Social: []socialProfileJSON{},
	}
	for _, l := range b.GetLogos() {
		out.Logos = append(out.Logos, toBrandImageJSON(l))
	}
	if f := b.GetFavicon(); f != nil {
		fj := toBrandImageJSON(f)
		out.Favicon = &fj
	}
	for _, c := range b.GetColors() {
		out.Colors = append(out.Colors, brandColorJSON{Hex: c.GetHex(), Count: c.GetCount(), Name: c.Name})
	}
	for _, s := range b.GetSocial() {
		out.Social = append(out.Social, socialProfileJSON{Network: s.GetNetwork(), URL: s.GetUrl()})
	}
	return out
}

// MarshalBrand returns a brand's compact JSON, for callers that embed it
// (MCP tool results).
func MarshalBrand(b *distillv1.Brand) ([]byte, error) {
	return marshal(toBrandJSON(b))
}

// BrandText is a brand as people read it, one fact a line.
func BrandText(b *distillv1.Brand) string {
	var lines []string
	add := func(label, value string) {
		if value != "" {
			lines = append(lines, label+": "+value)
		}
	}
	image := func(i *distillv1.BrandImage) string {
		s := i.GetUrl()
		if i.Width != nil && i.Height != nil {
			s += fmt.Sprintf(" (%dx%d)", i.GetWidth(), i.GetHeight())
		}
		return s
	}
	add("name", b.GetName())
	for _, l := range b.GetLogos() {
		add("logo", image(l))
	}
	if f := b.GetFavicon(); f != nil {
		add("favicon", image(f))
	}
	add("theme color", b.GetThemeColor())
	var colors []string
	for _, c := range b.GetColors() {
		s := c.GetHex()
		if c.GetName() != "" {
			s += " (" + c.GetName() + ")"
		}
		colors = append(colors, s)
	}
	add("colors", strings.Join(colors, ", "))
	add("fonts", strings.Join(b.GetFonts(), ", "))
	for _, s := range b.GetSocial() {
		add(s.GetNetwork(), s.GetUrl())
	}
	if len(lines) == 0 {
		return "no brand found"
	}
	return strings.Join(lines, "\n")
}
