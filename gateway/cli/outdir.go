package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"distill.dev/gateway/output"
	"distill.dev/proto/fetchopts"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/pick"
)

// indexName is the file --output-dir lists its pages in.
const indexName = "index.jsonl"

// dirSink writes each page to a file of its own in a folder as it comes,
// and a line for every URL to index.jsonl: {url, ok, file | error}.
type dirSink struct {
	p   *printer
	dir string
	// name gives the file of the URL at index i.
	name func(i int, url string) string

	mu     sync.Mutex
	index  *os.File
	failed bool
	err    error
}

func newDirSink(p *printer, dir string, urls []string) (*dirSink, error) {
	index, err := openIndex(dir, os.O_TRUNC)
	if err != nil {
		return nil, err
	}
	names := fileNames(urls, p.extension())
	return &dirSink{p: p, dir: dir, name: func(i int, _ string) string { return names[i] }, index: index}, nil
}

// openIndex makes dir and opens its index, emptied (os.O_TRUNC) or to
// add to (os.O_APPEND).
func openIndex(dir string, mode int) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, usagef("--output-dir: %v", err)
	}
	index, err := os.OpenFile(filepath.Join(dir, indexName), os.O_WRONLY|os.O_CREATE|mode, 0o644)
	if err != nil {
		return nil, usagef("--output-dir: %v", err)
	}
	return index, nil
}

type indexLine struct {
	URL   string `json:"url"`
	OK    bool   `json:"ok"`
	File  string `json:"file,omitempty"`
	Error string `json:"error,omitempty"`
}

func (s *dirSink) put(i int, it output.BatchItem) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var name string
	if it.Err == nil {
		name = s.name(i, it.URL)
		if err := s.writePage(name, it.Result); err != nil {
			// The page is lost, not the batch: the URL fails like any
			// other, and the index says why.
			it.Err = fmt.Errorf("%s: write %s: %w", it.URL, filepath.Join(s.dir, name), err)
		}
	}
	s.p.notes(it)
	line := indexLine{URL: it.URL, OK: it.Err == nil}
	if it.Err != nil {
		s.failed = true
		line.Error = it.Err.Error()
	} else {
		line.File = name
	}
	b, err := json.Marshal(line)
	if err == nil {
		_, err = s.index.Write(append(b, '\n'))
	}
	if err != nil && s.err == nil {
		s.err = fmt.Errorf("write %s: %w", s.index.Name(), err)
	}
}

func (s *dirSink) writePage(name string, d *distillv1.Distilled) error {
	f, err := os.Create(filepath.Join(s.dir, name))
	if err != nil {
		return err
	}
	switch format := fetchopts.Format(s.p.opts); {
	case format == distillv1.Format_FORMAT_JSON:
		err = output.WriteJSON(f, d)
	case s.p.opts.GetChunk() > 0:
		err = output.WriteChunkLines(f, d)
	default:
		err = output.WritePage(f, d, format)
	}
	return errors.Join(err, f.Close())
}

func (s *dirSink) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.index.Close(); err != nil && s.err == nil {
		s.err = fmt.Errorf("write %s: %w", s.index.Name(), err)
	}
	if s.err != nil {
		return s.err
	}
	if s.failed {
		return exitError{ExitFailure}
	}
	return nil
}

// extension is the file extension of the pages p writes: what was picked
// prints as JSON in every format.
func (p *printer) extension() string {
	switch {
	case pick.Asked(p.opts):
		return ".json"
	case p.opts.GetChunk() > 0 && fetchopts.Format(p.opts) != distillv1.Format_FORMAT_JSON:
		// Chunks print one JSON object a line.
		return ".jsonl"
	}
	return extension(p.format)
}

// extension is the file extension of a page written in format.
func extension(format string) string {
	switch format {
	case "text":
		return ".txt"
	case "json", formatJSONL:
		return ".json"
	case "html":
		return ".html"
	default:
		return ".md"
	}
}

// maxNameLen keeps a file name, suffix and extension included, well under
// the 255 bytes file systems allow.
const maxNameLen = 120

// fileNames names a file for each URL, in input order: its host and path
// with anything but letters, digits, dots and dashes turned into _, and
// -2, -3... on a name already taken, compared without case for the file
// systems that ignore it. The same URL twice gets two files.
func fileNames(urls []string, ext string) []string {
	names := make([]string, len(urls))
	n := newNamer(ext)
	for i, u := range urls {
		names[i] = n.take(u)
	}
	return names
}

// namer names pages' files as they come, each name once.
type namer struct {
	ext   string
	taken map[string]bool
}

func newNamer(ext string) *namer {
	return &namer{ext: ext, taken: map[string]bool{strings.ToLower(indexName): true}}
}

// take returns a free name for the page at raw, and takes it.
func (nm *namer) take(raw string) string {
	base := baseName(raw)
	name := base + nm.ext
	for n := 2; nm.taken[strings.ToLower(name)]; n++ {
		name = base + "-" + strconv.Itoa(n) + nm.ext
	}
	nm.taken[strings.ToLower(name)] = true
	return name
}

// baseName is a URL made into a file name, without extension.
func baseName(raw string) string {
	s := raw
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		s = strings.ToLower(u.Host) + u.EscapedPath()
		if u.RawQuery != "" {
			s += "_" + u.RawQuery
		}
	}
	var b strings.Builder
	under := false
	for _, r := range s {
		ok := r == '.' || r == '-' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')
		if !ok {
			if !under {
				b.WriteByte('_')
			}
			under = true
			continue
		}
		b.WriteRune(r)
		under = false
	}
	// No hidden files, no "." or "..", no name ending in a dot (which
	// Windows drops).
	name := strings.Trim(b.String(), "._-")
	if len(name) > maxNameLen {
		name = strings.TrimRight(name[:maxNameLen], "._-")
	}
	if name == "" {
		return "page"
	}
	return name
}
