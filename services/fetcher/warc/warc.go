// Package warc keeps HTTP exchanges as ISO 28500 WARC/1.1 records: a
// warcinfo record for each run, then a request and a response record for
// every exchange, written to one file as they arrive. Records are built,
// digested and serialised by github.com/nlnwa/gowarc; this package owns
// only the file: appending to it, refusing one that ends inside a record,
// gzipping each record as its own member when the name ends in .gz, and
// keeping the writes of many goroutines whole.
package warc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/nlnwa/gowarc/v3"
)

// Reasons a record's block was cut short, the values of WARC-Truncated
// (ISO 28500 section 5.13).
const (
	// TruncatedLength is a body cut at the byte cap (max_bytes), or one
	// the fetcher stopped reading because it had no use for the rest
	// (a redirect's body past its first 64 KiB, a type it refuses).
	TruncatedLength = "length"
	// TruncatedTime is a body whose reading ran out of time.
	TruncatedTime = "time"
	// TruncatedDisconnect is a body the connection broke in the middle of.
	TruncatedDisconnect = "disconnect"
	// TruncatedUnspecified is a body that could not be decoded to its end.
	TruncatedUnspecified = "unspecified"
)

// origPrefix renames the response headers that described the bytes on the
// wire rather than the decoded body the record holds, so that a reader
// does not decode it twice; X-Archive-Orig- is the prefix replay tools
// already use for headers they rewrote.
const origPrefix = "X-Archive-Orig-"

// Exchange is one HTTP request and its response as the fetcher made and
// read them.
type Exchange struct {
	// Date is when the request was sent.
	Date time.Time
	// Request is the request as sent: method, URL, Host and headers. Its
	// body is not read; RequestBody holds it.
	Request     *http.Request
	RequestBody []byte
	// Response is the response's status line and headers. Its body is not
	// read; Body holds what was kept of it.
	Response *http.Response
	// Body is the response body as far as it was read, with its content
	// codings undone when Decoded.
	Body    []byte
	Decoded bool
	// Truncated is "" when Body is the whole body, else one of the
	// Truncated* reasons.
	Truncated string
	// IP is the address of the server that answered, "" when unknown.
	IP string
}

// Info describes a run, for its warcinfo record.
type Info struct {
	// Software names the program and its version, e.g. "distill/0.1.0".
	Software string
	// Command is what the run was asked to do, e.g. "distill fetch".
	Command string
}

// Writer appends records to one WARC file. Its methods are safe for
// concurrent use.
type Writer struct {
	path string
	gz   bool

	mu     sync.Mutex
	f      *os.File
	infoID string
	// err is the first error met, which Close returns; after a failed
	// write, records are dropped.
	err     error
	broken  bool
	dropped int
}

// CorruptFileError refuses a file that cannot be appended to: one that
// ends inside a record (a run that was cut short), one that holds no WARC
// records, or one compressed otherwise than its name says.
type CorruptFileError struct {
	Path   string
	Reason string
	Err    error
	// Whole is the length of the file's whole records, before the one it
	// ends inside; 0 when there are none, or the file is not torn.
	Whole int64
}

func (e *CorruptFileError) Error() string {
	reason := e.Reason
	if e.Err != nil {
		reason += " (" + e.Err.Error() + ")"
	}
	fix := "move it aside or name another file"
	if e.Whole > 0 {
		fix = fmt.Sprintf("its whole records are its first %d bytes (truncate -s %d keeps them), or name another file", e.Whole, e.Whole)
	}
	return fmt.Sprintf("warc %s: %s; refusing to append to it: %s", e.Path, reason, fix)
}

func (e *CorruptFileError) Unwrap() error { return e.Err }

// Open opens path for appending, creating it when it does not exist, and
// writes the run's warcinfo record. An existing file is read through
// first, and refused with a *CorruptFileError unless every record in it is
// whole and it is compressed as its name says (.gz or not).
func Open(path string, info Info) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("warc: %w", err)
	}
	w := &Writer{path: path, gz: strings.HasSuffix(strings.ToLower(path), ".gz"), f: f}
	if err := w.check(); err != nil {
		_ = f.Close()
		return nil, err
	}
	if err := w.writeInfo(info); err != nil {
		_ = f.Close()
		return nil, err
	}
	return w, nil
}

// check reads an existing file through, so that records are never appended
// after a torn one, where no reader would find them.
func (w *Writer) check() error {
	st, err := w.f.Stat()
	if err != nil {
		return fmt.Errorf("warc: %w", err)
	}
	if st.Size() == 0 {
		return nil
	}
	// A one-byte file is the start of a record or of a gzip member, cut.
	var magic [2]byte
	if _, err := w.f.ReadAt(magic[:], 0); err != nil && err != io.EOF {
		return fmt.Errorf("warc: %w", err)
	}
	gzipped := magic == [2]byte{0x1f, 0x8b} || (st.Size() == 1 && magic[0] == 0x1f)
	switch {
	case gzipped && !w.gz:
		return &CorruptFileError{Path: w.path, Reason: "it is gzipped but its name does not end in .gz"}
	case !gzipped && w.gz:
		return &CorruptFileError{Path: w.path, Reason: "its name ends in .gz but it is not gzipped"}
	}
	cr := &countingReader{r: io.NewSectionReader(w.f, 0, st.Size())}
	br := bufio.NewReader(cr)
	// Where br stands in the file: what it took, less what it holds.
	pos := func() int64 { return cr.n - int64(br.Buffered()) }
	var records int
	var whole int64
	if gzipped {
		records, whole, err = scanMembers(br, pos)
	} else {
		records, err = scan(br, func() { whole = pos() })
	}
	if err != nil {
		return &CorruptFileError{Path: w.path, Reason: fmt.Sprintf("it ends inside a record, after %d whole ones", records), Err: err, Whole: whole}
	}
	if records == 0 {
		return &CorruptFileError{Path: w.path, Reason: "it holds no WARC records"}
	}
	return nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// scanMembers scans a gzipped file member by member, and returns how many
// records it read and where the last member whose records were all whole
// ends. pos says where br stands.
func scanMembers(br *bufio.Reader, pos func() int64) (records int, whole int64, err error) {
	var zr gzip.Reader
	for {
		if _, err := br.Peek(1); err == io.EOF {
			return records, whole, nil
		}
		// br is an io.ByteReader, so the gzip reader takes from it
		// exactly the member's bytes.
		if err := zr.Reset(br); err != nil {
			return records, whole, fmt.Errorf("gzip member: %w", unexpected(err))
		}
		zr.Multistream(false)
		// scan reads the member to its end, where gzip checks its
		// length and CRC.
		n, err := scan(bufio.NewReader(&zr), nil)
		records += n
		if err != nil {
			return records, whole, err
		}
		whole = pos()
	}
}

// scan reads WARC records through to the end of r, by their framing only:
// a header that starts "WARC/", a Content-Length, that many bytes of block
// and the blank line that ends the record. It returns how many whole
// records it read, and an error when r ends anywhere but between two;
// ended, when not nil, is called after each whole record.
//
// gowarc's reader is not used for this: told to be lenient, as it must be
// to read other writers' files, it takes a file cut inside a record's
// header for a clean end, so it cannot tell a torn file from a whole one.
func scan(r *bufio.Reader, ended func()) (int, error) {
	for records := 0; ; records++ {
		line, err := r.ReadString('\n')
		if err == io.EOF && line == "" {
			return records, nil
		}
		if err != nil {
			return records, fmt.Errorf("record header: %w", unexpected(err))
		}
		if !strings.HasPrefix(line, "WARC/") {
			return records, fmt.Errorf("record %d does not start with WARC/", records+1)
		}
		length := int64(-1)
		for {
			line, err = r.ReadString('\n')
			if err != nil {
				return records, fmt.Errorf("record header: %w", unexpected(err))
			}
			if line == "\r\n" || line == "\n" {
				break
			}
			name, value, _ := strings.Cut(line, ":")
			if strings.EqualFold(strings.TrimSpace(name), gowarc.ContentLength) {
				if length, err = strconv.ParseInt(strings.TrimSpace(value), 10, 64); err != nil || length < 0 {
					return records, fmt.Errorf("record %d: bad Content-Length %q", records+1, strings.TrimSpace(value))
				}
			}
		}
		if length < 0 {
			return records, fmt.Errorf("record %d has no Content-Length", records+1)
		}
		if n, err := io.CopyN(io.Discard, r, length); err != nil {
			return records, fmt.Errorf("record %d holds %d of its %d bytes: %w", records+1, n, length, unexpected(err))
		}
		var end [4]byte
		if _, err := io.ReadFull(r, end[:]); err != nil {
			return records, fmt.Errorf("record %d lacks its end: %w", records+1, unexpected(err))
		}
		if string(end[:]) != "\r\n\r\n" {
			return records, fmt.Errorf("record %d does not end with a blank line", records+1)
		}
		if ended != nil {
			ended()
		}
	}
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// recordOptions make gowarc compute what a record lacks: its id,
// Content-Length, and SHA-1 block and payload digests in base 32, the
// spelling crawlers and replay tools use.
// gowarc's validation policies stay at their defaults, which warn: what a
// server sent is kept even where it bends the rules (the tests read our
// records back under strict validation).
var recordOptions = []gowarc.WarcRecordOption{
	gowarc.WithAddMissingDigest(true),
	gowarc.WithDefaultDigestAlgorithm("sha1"),
}

func (w *Writer) writeInfo(info Info) error {
	id := newID()
	b := newBuilder(gowarc.Warcinfo)
	b.AddWarcHeader(gowarc.WarcRecordID, id)
	b.AddWarcHeaderTime(gowarc.WarcDate, time.Now())
	b.AddWarcHeader(gowarc.WarcFilename, filepath.Base(w.path))
	b.AddWarcHeader(gowarc.ContentType, gowarc.ApplicationWarcFields)
	fields := &gowarc.WarcFields{}
	if info.Software != "" {
		fields.Add("software", info.Software)
	}
	fields.Add("format", "WARC File Format 1.1")
	fields.Add("conformsTo", "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/")
	if info.Command != "" {
		fields.Add("description", info.Command)
	}
	// A reader must know the bodies are not the bytes on the wire.
	fields.Add("http-bodies", "decoded: each response body is stored with its Content-Encoding undone "+
		"and the headers that described the encoded bytes renamed "+origPrefix+"Content-Encoding, "+
		origPrefix+"Transfer-Encoding and "+origPrefix+"Content-Length; a body cut short "+
		"(at max_bytes, or by a broken connection) is marked WARC-Truncated")
	if _, err := fields.Write(b); err != nil {
		_ = b.Close()
		return fmt.Errorf("warc: warcinfo: %w", err)
	}
	rec, _, err := b.Build()
	if err != nil {
		return fmt.Errorf("warc: warcinfo: %w", err)
	}
	defer rec.Close()
	var buf bytes.Buffer
	if err := w.marshal(&buf, rec); err != nil {
		return fmt.Errorf("warc: warcinfo: %w", err)
	}
	if _, err := w.f.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("warc: write %s: %w", w.path, err)
	}
	w.infoID = id
	return nil
}

// Record writes ex as a request record and a response record, each naming
// the other in WARC-Concurrent-To, one after the other. It reports no
// error to its caller, whose fetch went well whatever becomes of its
// record: an exchange that cannot be encoded is left out, and after a
// write fails (a full disk) every later one is, the file ending at its
// last whole record; Err and Close say what was lost.
func (w *Writer) Record(ex Exchange) {
	data, err := w.encode(ex)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken || w.f == nil {
		w.dropped++
		return
	}
	if err != nil {
		w.fail(fmt.Errorf("warc: record %s: %w", ex.Request.URL, err))
		return
	}
	// One write for both records: with O_APPEND they land whole and
	// together, whoever else writes.
	if n, err := w.f.Write(data); err != nil {
		w.broken = true
		w.fail(fmt.Errorf("warc: write %s: %w", w.path, err))
		// A partial write would leave a torn record that the next run
		// refuses: cut it off.
		if n > 0 {
			if st, serr := w.f.Stat(); serr == nil {
				_ = w.f.Truncate(st.Size() - int64(n))
			}
		}
	}
}

// fail keeps the first error and counts the exchange lost. Called with mu
// held.
func (w *Writer) fail(err error) {
	w.dropped++
	if w.err == nil {
		w.err = err
	}
}

// Err returns the first error Record met, or nil.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lost()
}

// lost is the first error with how many exchanges are missing. Called
// with mu held.
func (w *Writer) lost() error {
	if w.err == nil {
		return nil
	}
	return fmt.Errorf("%w (%d exchanges not recorded)", w.err, w.dropped)
}

// Path is the file written to.
func (w *Writer) Path() string { return w.path }

// Close closes the file and returns the first error a record met, or the
// close's own. Records after Close are dropped.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return w.lost()
	}
	err := w.f.Close()
	w.f = nil
	if w.err != nil {
		return w.lost()
	}
	if err != nil {
		return fmt.Errorf("warc: close %s: %w", w.path, err)
	}
	return nil
}

// encode builds and serialises both records of ex.
func (w *Writer) encode(ex Exchange) ([]byte, error) {
	reqID, respID := newID(), newID()
	target := ex.Request.URL.String()
	common := func(b gowarc.WarcRecordBuilder, id, other, contentType string) {
		b.AddWarcHeader(gowarc.WarcRecordID, id)
		b.AddWarcHeaderTime(gowarc.WarcDate, ex.Date)
		b.AddWarcHeader(gowarc.WarcTargetURI, target)
		b.AddWarcHeader(gowarc.WarcConcurrentTo, other)
		b.AddWarcHeader(gowarc.WarcWarcinfoID, w.infoID)
		b.AddWarcHeader(gowarc.ContentType, contentType)
		if ex.IP != "" {
			b.AddWarcHeader(gowarc.WarcIPAddress, ex.IP)
		}
	}

	req := newBuilder(gowarc.Request)
	common(req, reqID, respID, gowarc.ApplicationHttp+";msgtype=request")
	if _, err := req.Write(requestBlock(ex.Request, ex.RequestBody)); err != nil {
		_ = req.Close()
		return nil, err
	}
	reqRec, _, err := req.Build()
	if err != nil {
		return nil, fmt.Errorf("request record: %w", err)
	}
	defer reqRec.Close()

	resp := newBuilder(gowarc.Response)
	common(resp, respID, reqID, gowarc.ApplicationHttp+";msgtype=response")
	if ex.Truncated != "" {
		resp.AddWarcHeader(gowarc.WarcTruncated, ex.Truncated)
	}
	if _, err := resp.Write(responseHead(ex.Response, len(ex.Body), ex.Decoded)); err != nil {
		_ = resp.Close()
		return nil, err
	}
	if _, err := resp.Write(ex.Body); err != nil {
		_ = resp.Close()
		return nil, err
	}
	respRec, _, err := resp.Build()
	if err != nil {
		return nil, fmt.Errorf("response record: %w", err)
	}
	defer respRec.Close()

	var buf bytes.Buffer
	buf.Grow(len(ex.Body) + 2048)
	if err := w.marshal(&buf, reqRec); err != nil {
		return nil, err
	}
	if err := w.marshal(&buf, respRec); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// marshal serialises one record into buf, as a gzip member of its own when
// the file is gzipped, so that a reader can seek to any record.
func (w *Writer) marshal(buf *bytes.Buffer, rec gowarc.WarcRecord) error {
	if !w.gz {
		_, _, err := gowarc.NewMarshaler().Marshal(buf, rec, 0)
		return err
	}
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	zw.Reset(buf)
	if _, _, err := gowarc.NewMarshaler().Marshal(zw, rec, 0); err != nil {
		return err
	}
	return zw.Close()
}

// gzipWriters are reused: each holds near a megabyte of compressor state,
// which one per record would allocate anew.
var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

// requestBlock is the request as HTTP/1.1 puts it on the wire; an HTTP/2
// request is archived in the same form, as other crawlers do, since WARC
// readers know no other.
func requestBlock(r *http.Request, body []byte) []byte {
	var b bytes.Buffer
	host := r.Host
	if host == "" {
		host = r.URL.Host
	}
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", r.Method, r.URL.RequestURI(), host)
	h := r.Header.Clone()
	if len(body) > 0 {
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	_ = h.Write(&b)
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}

// responseHead is the response's status line and headers as they describe
// the stored body: when the body was decoded, Content-Encoding and
// Transfer-Encoding are renamed, and a Content-Length other than the
// stored body's too, with Content-Length set to what is stored.
func responseHead(r *http.Response, n int, decoded bool) []byte {
	var b bytes.Buffer
	status := r.Status
	if status == "" {
		status = strconv.Itoa(r.StatusCode) + " " + http.StatusText(r.StatusCode)
	}
	proto := r.Proto
	if proto == "" {
		proto = "HTTP/1.1"
	}
	fmt.Fprintf(&b, "%s %s\r\n", proto, status)
	h := r.Header.Clone()
	if decoded {
		rename(h, "Content-Encoding")
	}
	if len(r.TransferEncoding) > 0 {
		h[origPrefix+"Transfer-Encoding"] = []string{strings.Join(r.TransferEncoding, ", ")}
	}
	h.Del("Transfer-Encoding")
	if cl := h.Get("Content-Length"); cl != strconv.Itoa(n) {
		if cl != "" {
			rename(h, "Content-Length")
		}
		h.Set("Content-Length", strconv.Itoa(n))
	}
	_ = h.Write(&b)
	b.WriteString("\r\n")
	return b.Bytes()
}

func rename(h http.Header, key string) {
	if v := h.Values(key); len(v) > 0 {
		h[origPrefix+key] = v
		h.Del(key)
	}
}

// newBuilder is gowarc.NewRecordBuilder, one at a time: gowarc v3.1.0
// sets uuid's package-wide random pool flag on every builder it makes,
// which races with other builders and with uuid.New (go test -race).
func newBuilder(t gowarc.RecordType) gowarc.WarcRecordBuilder {
	builderMu.Lock()
	defer builderMu.Unlock()
	return gowarc.NewRecordBuilder(t, recordOptions...)
}

func newID() string {
	builderMu.Lock()
	defer builderMu.Unlock()
	return "<" + uuid.New().URN() + ">"
}

// builderMu serialises what touches uuid's package state; see newBuilder.
var builderMu sync.Mutex
