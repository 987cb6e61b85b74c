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
)

// indexName is the file --output-dir lists its pages in.
const indexName = "index.jsonl"

// dirSink writes each page to a file of its own in a folder as it comes,
// and a line for every URL to index.jsonl: {url, ok, file | error}.
type dirSink struct {
	p     *printer
	dir   string
	names []string

	mu     sync.Mutex
	index  *os.File
	failed bool
	err    error
}

func newDirSink(p *printer, dir string, urls []string) (*dirSink, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, usagef("--output-dir: %v", err)
	}
	index, err := os.Create(filepath.Join(dir, indexName))
	if err != nil {
		return nil, usagef("--output-dir: %v", err)
	}
	ext := extension(p.format)
	if p.opts.GetChunk() > 0 && fetchopts.Format(p.opts) != distillv1.Format_FORMAT_JSON {
		ext = ".jsonl"
	}
	return &dirSink{p: p, dir: dir, names: fileNames(urls, ext), index: index}, nil
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
	if it.Err == nil {
		if err := s.writePage(s.names[i], it.Result); err != nil {
			// The page is lost, not the batch: the URL fails like any
			// other, and the index says why.
			it.Err = fmt.Errorf("%s: write %s: %w", it.URL, filepath.Join(s.dir, s.names[i]), err)
		}
	}
	s.p.notes(it)
	line := indexLine{URL: it.URL, OK: it.Err == nil}
	if it.Err != nil {
		s.failed = true
		line.Error = it.Err.Error()
	} else {
		line.File = s.names[i]
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
	taken := map[string]bool{strings.ToLower(indexName): true}
	for i, u := range urls {
		base := baseName(u)
		name := base + ext
		for n := 2; taken[strings.ToLower(name)]; n++ {
			name = base + "-" + strconv.Itoa(n) + ext
		}
		taken[strings.ToLower(name)] = true
		names[i] = name
	}
	return names
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
