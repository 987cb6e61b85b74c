package llmformat

import (
	"net/url"
	"testing"
)

func TestFormat(t *testing.T) {
	t.Parallel()
	page, _ := url.Parse("https://x.example/a")
	md := "# Tide pools\n\nA **tide pool** holds *sea* life; keep `**raw**` and snake_case_name and 2*3*4.\n\n" +
		"![An anemone](https://x.example/a.jpg) ![](https://x.example/spacer.gif)\n\n---\n\nSee [the notes](https://x.example/notes).\n\n```md\n**kept**\n```"
	got := Format(Page{Title: "Tide pools", URL: "https://x.example/a", Facts: [][2]string{{"Author", "Mara"}, {"Site", ""}}}, md, page)
	want := "# Tide pools\nURL: https://x.example/a\nAuthor: Mara\n\n" +
		"A tide pool holds sea life; keep `**raw**` and snake_case_name and 2*3*4.\n\n(image: An anemone)\n\n" +
		"See the notes[^1].\n\n```md\n**kept**\n```\n\n## Links\n\n[^1]: https://x.example/notes"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
