package pdf

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/klippa-app/go-pdfium"
	pdfiumerrors "github.com/klippa-app/go-pdfium/errors"
	"github.com/klippa-app/go-pdfium/references"
	"github.com/klippa-app/go-pdfium/requests"

	"distill.dev/proto/failure"
)

// Errors a document can be refused with; Read wraps them in a
// failure.UnsupportedContent, so errors.Is finds both.
var (
	ErrEncrypted = errors.New("document is encrypted: it needs a password to open")
	ErrBroken    = errors.New("document is damaged or not a PDF")
	// ErrMemory is wrapped in a failure.TooLarge instead.
	ErrMemory = errors.New("document needs more memory than one document may use")
)

// Magic is how every PDF file starts (a few bytes of junk before it are
// tolerated by readers, so callers look for it near the start).
const Magic = "%PDF-"

// Document is what a PDF says, in reading order.
type Document struct {
	Title  string // from the document's metadata, "" when it has none
	Author string // likewise
	Pages  int
	// PagesRead is how many pages, from the first, were read: fewer than
	// Pages when the text reached the limit Read was given.
	PagesRead int
	// Markdown and Text are the content: headings from the fonts, one
	// section per page where the fonts name none.
	Markdown string
	Text     string
	// Heading is the first heading, "" when the fonts mark none.
	Heading string
	// TextChars counts the letters and digits on the pages read, to tell
	// a scan without a text layer from a document.
	TextChars int
}

// MaxChars bounds the text gathered from one document, whatever a caller
// asks: a few megabytes of compressed PDF can hold far more text than
// any reader wants, and the text is what stays in memory.
const MaxChars = 16 << 20

// Read reads one document. It stops reading pages once it has gathered
// more than maxChars bytes of text (at most MaxChars; 0 asks for that), so
// a caller with an output budget passes a little more than the budget can
// hold. It stops at ctx's end or, once it has a worker, the Engine's
// timeout, whichever comes first, killing the worker if it is mid-call. A document that needs a
// password or cannot be parsed is a failure.UnsupportedContent.
func (e *Engine) Read(ctx context.Context, body []byte, maxChars int) (*Document, error) {
	// Close waits for the reads in flight, a worker being killed included:
	// the runtime's pool must not be closed under them.
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, errClosed
	}
	e.reads.Add(1)
	e.mu.Unlock()
	defer e.reads.Done()
	inst, err := e.instance(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("read pdf: %w", err)
		}
		return nil, err
	}
	// The document's own time starts once it has a worker: making the
	// runtime and waiting for a worker are bounded by ctx alone.
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	// A worker is never reused, so killing it mid-call loses nothing but
	// this document.
	killed := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(killed)
		_ = inst.Kill()
	})
	defer func() {
		if stop() {
			_ = inst.Close()
			return
		}
		// The kill runs in a goroutine of its own: wait for it, so that
		// nothing touches the pool once Read has returned.
		<-killed
	}()
	if maxChars <= 0 || maxChars > MaxChars {
		maxChars = MaxChars
	}
	doc, err := read(ctx, inst, body, maxChars, e.memoryLimit)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("read pdf: %w", ctxErr)
		}
		return nil, err
	}
	return doc, nil
}

func read(ctx context.Context, inst pdfium.Pdfium, body []byte, maxChars int, limit int64) (*Document, error) {
	opened, err := inst.OpenDocument(&requests.OpenDocument{File: &body})
	if err != nil {
		return nil, openError(err, limit)
	}
	d := opened.Document
	doc := &Document{
		Title:  meta(inst, d, "Title"),
		Author: meta(inst, d, "Author"),
	}
	count, err := inst.FPDF_GetPageCount(&requests.FPDF_GetPageCount{Document: d})
	if err != nil {
		return nil, failure.Wrap(failure.UnsupportedContent, ErrBroken, "pdf: count pages")
	}
	doc.Pages = count.PageCount
	var blocks []block
	gathered := 0
	for i := range doc.Pages {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p, err := readPage(inst, d, i)
		if err != nil {
			return nil, failure.Wrap(failure.UnsupportedContent, ErrBroken, "pdf: page %d", i+1)
		}
		bs, chars := pageBlocks(p, i+1)
		blocks = append(blocks, bs...)
		doc.TextChars += chars
		doc.PagesRead = i + 1
		for _, b := range bs {
			gathered += len(b.text)
		}
		if gathered > maxChars {
			break
		}
	}
	c := layout(blocks, doc.Pages)
	doc.Markdown, doc.Text, doc.Heading = c.md, c.text, c.heading
	return doc, nil
}

func openError(err error, limit int64) error {
	switch {
	// go-pdfium says so in words alone when the guest's malloc fails: the
	// document does not fit in the worker's memory.
	case strings.Contains(err.Error(), "allocate memory"):
		return failure.Wrap(failure.TooLarge, ErrMemory, "pdf over the %d MiB memory limit", limit>>20)
	case errors.Is(err, pdfiumerrors.ErrPassword), errors.Is(err, pdfiumerrors.ErrSecurity):
		return failure.Wrap(failure.UnsupportedContent, ErrEncrypted, "pdf")
	case errors.Is(err, pdfiumerrors.ErrFormat), errors.Is(err, pdfiumerrors.ErrFile):
		return failure.Wrap(failure.UnsupportedContent, ErrBroken, "pdf")
	}
	// Anything else is the engine failing (out of memory, a trap), which
	// this document caused.
	return failure.Wrap(failure.UnsupportedContent, ErrBroken, "pdf: %v", err)
}

// meta returns one entry of the document information dictionary, "" when
// it is absent.
func meta(inst pdfium.Pdfium, d references.FPDF_DOCUMENT, tag string) string {
	res, err := inst.GetMetaData(&requests.GetMetaData{Document: d, Tags: &[]string{tag}})
	if err != nil || len(res.Tags) == 0 {
		return ""
	}
	return strings.TrimSpace(strings.ToValidUTF8(res.Tags[0].Value, ""))
}

func readPage(inst pdfium.Pdfium, d references.FPDF_DOCUMENT, index int) (page, error) {
	ref := requests.Page{ByIndex: &requests.PageByIndex{Document: d, Index: index}}
	size, err := inst.FPDF_GetPageHeight(&requests.FPDF_GetPageHeight{Page: ref})
	if err != nil {
		return page{}, err
	}
	width, err := inst.FPDF_GetPageWidth(&requests.FPDF_GetPageWidth{Page: ref})
	if err != nil {
		return page{}, err
	}
	st, err := inst.GetPageTextStructured(&requests.GetPageTextStructured{
		Page:                   ref,
		Mode:                   requests.GetPageTextStructuredModeRects,
		CollectFontInformation: true,
	})
	if err != nil {
		return page{}, err
	}
	p := page{width: width.Width, height: size.Height, runs: make([]run, 0, len(st.Rects))}
	for _, r := range st.Rects {
		text := strings.ToValidUTF8(r.Text, "")
		if strings.TrimSpace(text) == "" {
			continue
		}
		rn := run{
			text: text,
			x0:   r.PointPosition.Left,
			x1:   r.PointPosition.Right,
			// PDF space grows upwards; layout reads top to bottom.
			y0: size.Height - max(r.PointPosition.Top, r.PointPosition.Bottom),
			y1: size.Height - min(r.PointPosition.Top, r.PointPosition.Bottom),
		}
		if f := r.FontInformation; f != nil {
			rn.size = f.RenderedSize
			if rn.size <= 0 {
				rn.size = f.Size
			}
			rn.bold = isBold(f.Weight, f.Flags, f.Name)
		}
		if rn.size <= 0 {
			rn.size = rn.y1 - rn.y0
		}
		p.runs = append(p.runs, rn)
	}
	return p, nil
}

// forceBold is the font descriptor flag for a bold face drawn from a
// regular one (PDF 32000-1, 9.8.2).
const forceBold = 1 << 18

func isBold(weight, flags int, name string) bool {
	if weight >= 600 || flags&forceBold != 0 {
		return true
	}
	n := strings.ToLower(name)
	return strings.Contains(n, "bold") || strings.Contains(n, "black") || strings.Contains(n, "heavy")
}
