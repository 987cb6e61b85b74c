package brand

import (
	"strings"
	"testing"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

func TestAddCSS(t *testing.T) {
	t.Parallel()
	b := &distillv1.Brand{Fonts: []string{"Inter"}}
	finish(b, newPalette())
	AddCSS(b, `/* #123456 in a comment */ :root{--accent:#e91e63} a{color:#E91E63} a:hover{color:rgba(233,30,99,.8)}
		.x{background:#fff;border-color:#abc} h1{font-family:"Playfair Display", Georgia, serif} .y{color:rgba(1,2,3,0)}`)
	var colors []string
	for _, c := range b.GetColors() {
		colors = append(colors, c.GetHex()+"/"+c.GetName())
	}
	if got := strings.Join(colors, " "); got != "#e91e63/--accent #aabbcc/" {
		t.Errorf("colors %q", got)
	}
	if got := strings.Join(b.GetFonts(), ","); got != "Inter,Playfair Display" {
		t.Errorf("fonts %q", got)
	}
	AddCSS(b, `.z{color:#aabbcc} .w{color:#aabbcc} .v{color:#aabbcc}`)
	if b.GetColors()[0].GetHex() != "#aabbcc" || b.GetColors()[0].GetCount() != 4 {
		t.Errorf("after a second sheet: %v", b.GetColors())
	}
}
