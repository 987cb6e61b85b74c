package output

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// Content returns what the markdown, text, llm and html formats print for
// a page: the three that are not Markdown come in the text field. A page
// asked for what a picker picked prints that, as JSON; one asked for its
// diff or its brand prints that instead (both, the diff first, when both
// were asked for).
func Content(d *distillv1.Distilled, format distillv1.Format) string {
	if p := d.GetPicked(); p != nil {
		return pickedText(p)
	}
	var parts []string
	if df := d.GetDiff(); df != nil {
		parts = append(parts, DiffText(df))
	}
	if b := d.GetBrand(); b != nil {
		parts = append(parts, BrandText(b))
	}
	if len(parts) > 0 {
		return strings.Join(parts, "\n\n")
	}
	switch format {
	case distillv1.Format_FORMAT_TEXT, distillv1.Format_FORMAT_LLM, distillv1.Format_FORMAT_HTML:
		return d.GetText()
	}
	return d.GetMarkdown()
}

// WritePage writes one page's content, ending in exactly one newline.
func WritePage(w io.Writer, d *distillv1.Distilled, format distillv1.Format) error {
	_, err := io.WriteString(w, strings.TrimRight(Content(d, format), "\n")+"\n")
	return err
}

// WriteBatch writes the pages of a batch in the order given, each under a
// header line naming its URL. Failed URLs get their header and the error,
// so the output keeps one section per input.
func WriteBatch(w io.Writer, items []BatchItem, format distillv1.Format) error {
	for i, it := range items {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		if _, err := fmt.Fprintf(w, "==> %s <==\n", it.URL); err != nil {
			return err
		}
		if it.Err != nil {
			if _, err := fmt.Fprintf(w, "error: %v\n", it.Err); err != nil {
				return err
			}
			continue
		}
		if err := WritePage(w, it.Result, format); err != nil {
			return err
		}
	}
	return nil
}

// StatsLine summarises token savings in one line for stderr.
func StatsLine(d *distillv1.Distilled) string {
	s := d.GetStats()
	return fmt.Sprintf("stats: %s: %d bytes, %d tokens -> %d tokens, saved %d (%.1f%%)",
		d.GetFinalUrl(), s.GetRawBytes(), s.GetRawTokens(), s.GetOutputTokens(), s.GetSavedTokens(), 100*s.GetSavedRatio())
}

// DiagnosticsLine summarises extraction quality in one line for stderr.
func DiagnosticsLine(d *distillv1.Distilled) string {
	g := d.GetDiagnostics()
	line := fmt.Sprintf("diagnostics: %s: profile=%s raw_bytes=%d output_chars=%d output_tokens=%d extraction_ratio=%.4f links=%d tables=%d actions=%d used_headless=%t truncated=%t low_content=%t",
		d.GetFinalUrl(), g.GetProfile(), g.GetRawBytes(), g.GetOutputChars(), g.GetOutputTokens(), g.GetExtractionRatio(),
		g.GetLinkCount(), g.GetTableCount(), g.GetActionCount(), g.GetUsedHeadless(), g.GetTruncated(), g.GetLowContent())
	if g.GetTruncatedBody() {
		line += " truncated_body=true"
	}
	if g.PageCount != nil {
		line += fmt.Sprintf(" pages=%d", g.GetPageCount())
	}
	if g.QueryRelevance != nil {
		line += fmt.Sprintf(" query_relevance=%.3f query_blocks=%d", g.GetQueryRelevance(), g.GetQueryBlocks())
	}
	if t := g.GetPageType(); t != "" {
		line += " page_type=" + t
	}
	return line
}

// HTTPStatus names an HTTP status as a line of text: "HTTP 404 Not Found".
func HTTPStatus(code int32) string {
	if text := http.StatusText(int(code)); text != "" {
		return fmt.Sprintf("HTTP %d %s", code, text)
	}
	return fmt.Sprintf("HTTP %d", code)
}
