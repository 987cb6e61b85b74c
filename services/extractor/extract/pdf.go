package extract

import (
	"bytes"
	"context"
	"net/url"

	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	"distill.dev/services/extractor/pdf"
)

// reasonNoTextLayer is the low_content_reason of a PDF with (almost) no
// text to extract: a scan, or pages of images.
const reasonNoTextLayer = "no_text_layer"

// minCharsPerPage is the fewest letters and digits a page of a PDF with a
// text layer is expected to have; a scan has none, or a page number.
const minCharsPerPage = 20

// charsPerToken is more bytes of text than any token of real text takes.
const charsPerToken = 16

// isPDF reports whether a body of a generic or unnamed type is a PDF by
// its first bytes, where readers allow a little junk before the header.
func isPDF(mediaType string, body []byte) bool {
	switch mediaType {
	case "application/pdf", "application/x-pdf":
		return true
	case "", "application/octet-stream", "binary/octet-stream":
		return bytes.Contains(body[:min(len(body), 1024)], []byte(pdf.Magic))
	}
	return false
}

// fromPDF distils a PDF document: its text in reading order, titled by its
// metadata or else its first heading. It returns the text the stats count
// as the raw page, since a PDF's own bytes are not text.
func (e *Extractor) fromPDF(ctx context.Context, req *internalv1.ExtractRequest, u *url.URL) (page, []byte, error) {
	raw := req.GetHtml()
	// The engine's memory grows with the document, so the byte budget the
	// fetcher enforces holds here too, for callers that bring their own.
	if limit := fetchopts.MaxBytes(req.GetOptions()); int64(len(raw)) > limit {
		return page{}, nil, failure.New(failure.TooLarge, "pdf of %d bytes exceeds the max_bytes cap of %d bytes", len(raw), limit)
	}
	// Pages past what the output budget can hold are not read. No token
	// of real text is nearly as long as charsPerToken bytes, so the text
	// read still fills the budget and is cut to it as any page is.
	maxChars := 0
	if budget := fetchopts.MaxOutputTokens(req.GetOptions()); budget > 0 {
		maxChars = int(min(budget, pdf.MaxChars/charsPerToken) * charsPerToken)
	}
	doc, err := e.pdf.Read(ctx, raw, maxChars)
	if err != nil {
		return page{}, nil, err
	}
	p := page{
		title:    doc.Title,
		byline:   doc.Author,
		markdown: doc.Markdown,
		text:     doc.Text,
		// The whole document is returned whatever the profile asked.
		profile:  profileFull,
		pdfPages: doc.Pages,
		cut:      doc.PagesRead < doc.Pages,
	}
	if p.title == "" {
		p.title = doc.Heading
	}
	if p.title == "" {
		p.title = urlTitle(u)
	}
	if doc.TextChars < minCharsPerPage*max(1, doc.PagesRead) {
		p.lowContentReason = reasonNoTextLayer
	}
	return p, []byte(doc.Text), nil
}
