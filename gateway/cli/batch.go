package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"distill.dev/gateway/output"
)

// batchURLs is the positional URLs followed by those of the --input file
// (- for standard input), one a line, blank lines and # comments skipped.
func batchURLs(args []string, input string, stdin io.Reader) ([]string, error) {
	urls := append([]string(nil), args...)
	if input == "" {
		if len(urls) == 0 {
			return nil, errors.New("--input names no file: give a file, - for standard input, or URLs as arguments")
		}
		return urls, nil
	}
	r := stdin
	name := "standard input"
	if input != stdinName {
		f, err := os.Open(input)
		if err != nil {
			return nil, fmt.Errorf("--input: %w", err)
		}
		defer f.Close()
		r, name = f, input
	}
	sc := bufio.NewScanner(r)
	// A URL may be long; a line longer than this is not a URL anyone means.
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.ContainsAny(line, " \t") {
			return nil, fmt.Errorf("--input %s line %d holds more than one word (%q): give one URL a line", name, n, line)
		}
		urls = append(urls, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--input %s line %d: %w", name, n+1, err)
	}
	if len(urls) == 0 {
		return nil, fmt.Errorf("--input %s holds no URLs (one a line; blank lines and # comments are skipped)", name)
	}
	return urls, nil
}

// sink receives a batch's answers as they come, in any order.
type sink interface {
	// put takes the answer for the URL at index i.
	put(i int, it output.BatchItem)
	// close finishes the output once every answer is in; an exitError
	// when any URL failed.
	close() error
}

// sink returns where this run's answers go: kept and printed in input
// order at the end, or streamed as they come.
func (r *fetchRun) sink(urls []string) (sink, error) {
	switch {
	case r.outDir != "":
		return newDirSink(&r.printer, r.outDir, urls)
	case r.format == formatJSONL:
		return &lineSink{p: &r.printer}, nil
	default:
		return &keptSink{p: &r.printer, items: make([]output.BatchItem, len(urls))}, nil
	}
}

// keptSink keeps every answer and prints them all at the end, in input
// order, as the markdown, text and json formats do.
type keptSink struct {
	p     *printer
	items []output.BatchItem
}

func (s *keptSink) put(i int, it output.BatchItem) { s.items[i] = it }

func (s *keptSink) close() error { return s.p.printAll(s.items, len(s.items) > 1) }

// lineSink prints each answer as a JSON line the moment it comes, so a
// long batch can be read (and piped on) while it runs.
type lineSink struct {
	p      *printer
	mu     sync.Mutex
	failed bool
	err    error
}

func (s *lineSink) put(_ int, it output.BatchItem) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.p.notes(it)
	s.failed = s.failed || it.Err != nil
	if s.err == nil {
		s.err = output.WriteBatchLine(s.p.g.stdout, it)
	}
}

func (s *lineSink) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return fmt.Errorf("write output: %w", s.err)
	}
	if s.failed {
		return exitError{ExitFailure}
	}
	return nil
}
