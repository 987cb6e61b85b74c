package extract

import (
	"strings"
	"testing"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// streamed is a page streamed by React: its text arrives in hidden parts
// at the end of the body, which its scripts move into the shell.
const streamed = `<!doctype html><html><head><title>Tide tables</title></head><body>
<main><!--$?--><template id="B:0"></template><p>Loading…</p><!--/$--></main>
<div hidden id="S:0"><article><h1>Tide tables</h1>
<p>High water comes about fifty minutes later each day, following the moon rather than the sun.</p>
<p>Spring tides, the largest, follow the new and the full moon by a day or two.</p></article></div>
<script>$RC("B:0","S:0")</script></body></html>`

// TestStreamedPagesAreRead: every profile reads a streamed page as a
// browser shows it, not as an empty shell.
func TestStreamedPagesAreRead(t *testing.T) {
	t.Parallel()
	for _, profile := range []distillv1.Profile{distillv1.Profile_PROFILE_ARTICLE, distillv1.Profile_PROFILE_FULL} {
		d := run(t, htmlReq(streamed, &distillv1.FetchOptions{Profile: profile}))
		md := d.GetMarkdown()
		if !strings.Contains(md, "fifty minutes later") || !strings.Contains(md, "Spring tides") || strings.Contains(md, "Loading") {
			t.Errorf("%s profile:\n%s", profile, md)
		}
	}
}
