package blocks

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	md := "# Title\nIntro line one\nline two\n\n## Part\n\n- a\n- b\n\n| h |\n|---|\n| 1 |\n\n```go\nx := 1\n\ny := 2\n```\n> quote\n\n---\n\n### Deep\n\n1. one\n\n## Next\n\ntext"
	bs := Parse(md)
	var got []string
	for _, b := range bs {
		got = append(got, b.Kind.String()+"@"+strings.Join(b.Path, "/"))
	}
	want := "heading@Title paragraph@Title heading@Title/Part list@Title/Part table@Title/Part code@Title/Part quote@Title/Part " +
		"rule@Title/Part heading@Title/Part/Deep list@Title/Part/Deep heading@Title/Next paragraph@Title/Next"
	if strings.Join(got, " ") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
	if bs[5].Text != "```go\nx := 1\n\ny := 2\n```" || bs[5].Fence != "```go" {
		t.Errorf("code block %q fence %q: a blank line inside a fence must not split it", bs[5].Text, bs[5].Fence)
	}
	if TableHeader(bs[4].Text) != "| h |\n|---|" {
		t.Errorf("table header %q", TableHeader(bs[4].Text))
	}
	if Join(Parse("a\n\n\n\nb")) != "a\n\nb" {
		t.Error("Join does not write blocks a blank line apart")
	}
}
