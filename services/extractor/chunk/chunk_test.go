package chunk

import (
	"strings"
	"testing"

	"distill.dev/services/extractor/tokens"
)

const docs = "# Retries\n\nFetchkit retries a request when the connection fails.\n\n" +
	"## Defaults\n\nA client makes three attempts.\n\n" +
	"| Setting | Default |\n| --- | --- |\n| MaxRetries | 2 |\n| BaseDelay | 200ms |\n\n" +
	"## Go\n\n```go\nclient := fetchkit.New()\n\nresp, err := client.Get(ctx, url)\n```\n\nThe end."

func TestSplitKeepsWholeBlocks(t *testing.T) {
	t.Parallel()
	chunks := Split(docs, "https://x.example/", 40, 0)
	if len(chunks) < 2 {
		t.Fatalf("got %d chunks, want several: %+v", len(chunks), chunks)
	}
	var joined []string
	for i, c := range chunks {
		if c.Index != i || c.URL != "https://x.example/" {
			t.Errorf("chunk %d: index %d url %q", i, c.Index, c.URL)
		}
		if n := tokens.Count(c.Text); n != c.Tokens || n > 40 {
			t.Errorf("chunk %d: tokens %d, counted %d, bound 40", i, c.Tokens, n)
		}
		if strings.HasSuffix(c.Text, "## Go") || strings.HasSuffix(c.Text, "## Defaults") {
			t.Errorf("chunk %d ends on a heading: %q", i, c.Text)
		}
		joined = append(joined, c.Text)
	}
	if got := strings.Join(joined, "\n\n"); got != docs {
		t.Errorf("chunks without overlap do not add up to the page:\n%s", got)
	}
	var goChunk *Chunk
	for i := range chunks {
		if strings.Contains(chunks[i].Text, "```go") {
			goChunk = &chunks[i]
		}
	}
	if goChunk == nil || strings.Join(goChunk.HeadingPath, "/") != "Retries/Go" {
		t.Errorf("the code's chunk has path %v, want [Retries Go]", goChunk)
	}
}

func TestSplitCutsOversizedBlocks(t *testing.T) {
	t.Parallel()
	var code, table, prose strings.Builder
	code.WriteString("```python\n")
	table.WriteString("| Name | Price |\n| --- | --- |\n")
	for i := range 60 {
		code.WriteString("value_" + strings.Repeat("x", i%7) + " = compute(" + strings.Repeat("a", i%5) + ")\n")
		table.WriteString("| item " + strings.Repeat("z", i%4) + " | 10 |\n")
		prose.WriteString("This sentence talks about the weather in some detail. ")
	}
	code.WriteString("```")
	unspaced := strings.Repeat("数据处理系统", 80)
	word := strings.Repeat("abcdefghij", 60)
	tests := []struct {
		name  string
		md    string
		check func(t *testing.T, size int64, c Chunk)
	}{
		{"code is reopened", code.String(), func(t *testing.T, size int64, c Chunk) {
			if !strings.HasPrefix(c.Text, "```python\n") || !strings.HasSuffix(c.Text, "\n```") {
				t.Errorf("piece not fenced: %q", c.Text)
			}
		}},
		{"table repeats its header", table.String(), func(t *testing.T, size int64, c Chunk) {
			// A header that would take half the chunk is not repeated.
			if size >= 2*tokens.Count("| Name | Price |\n| --- | --- |\n") && !strings.HasPrefix(c.Text, "| Name | Price |\n| --- | --- |\n| item") {
				t.Errorf("piece lacks the header: %q", c.Text)
			}
		}},
		{"prose at sentences", prose.String(), func(t *testing.T, size int64, c Chunk) {
			if !strings.HasSuffix(c.Text, ".") {
				t.Errorf("piece not cut after a sentence: %q", c.Text)
			}
		}},
		{"unspaced script", unspaced, func(t *testing.T, size int64, c Chunk) {}},
		{"one long word", word, func(t *testing.T, size int64, c Chunk) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, size := range []int64{MinSize, 30, 64} {
				chunks := Split(tt.md, "u", size, 0)
				if len(chunks) < 2 {
					t.Fatalf("size %d: %d chunks", size, len(chunks))
				}
				for _, c := range chunks {
					if n := tokens.Count(c.Text); n > size || n != c.Tokens {
						t.Errorf("size %d: chunk %d has %d tokens (says %d): %q", size, c.Index, n, c.Tokens, c.Text)
					}
					tt.check(t, size, c)
				}
			}
		})
	}
}

func TestSplitOverlap(t *testing.T) {
	t.Parallel()
	md := "First paragraph has several plain words in it.\n\nSecond paragraph is here with more words.\n\n" +
		"Third paragraph closes the page with a few words."
	chunks := Split(md, "u", 24, 12)
	if len(chunks) < 2 {
		t.Fatalf("%d chunks", len(chunks))
	}
	for i, c := range chunks {
		if c.Tokens > 24 {
			t.Errorf("chunk %d over the bound: %d", i, c.Tokens)
		}
		if i == 0 {
			continue
		}
		prev := chunks[i-1].Text
		lead, _, _ := strings.Cut(c.Text, "\n\n")
		if !strings.HasSuffix(prev, lead) {
			t.Errorf("chunk %d does not start with the end of chunk %d: %q after %q", i, i-1, lead, prev)
		}
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		size, overlap int64
		ok            bool
	}{
		{0, 0, true}, {256, 50, true}, {256, 128, true},
		{256, 129, false}, {8, 0, false}, {0, 10, false}, {-1, 0, false},
	} {
		if err := Check(tt.size, tt.overlap); (err == nil) != tt.ok {
			t.Errorf("Check(%d, %d) = %v, want ok %t", tt.size, tt.overlap, err, tt.ok)
		}
	}
}

func TestSplitCutsARunWithNoBoundary(t *testing.T) {
	t.Parallel()
	run := strings.Repeat("[", 50_000) + "数据" + strings.Repeat("[", 10_000)
	chunks := Split(run, "u", 64, 0)
	total := 0
	for _, c := range chunks {
		if c.Tokens > 64 || c.Tokens != tokens.Count(c.Text) {
			t.Fatalf("chunk %d: %d tokens", c.Index, c.Tokens)
		}
		total += len(c.Text)
	}
	// Far fewer chunks than bytes: each takes as much of the run as fits.
	if total != len(run) || len(chunks) > len(run)/64 {
		t.Errorf("%d chunks holding %d bytes of %d", len(chunks), total, len(run))
	}
}
