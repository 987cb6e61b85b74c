package crawl

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// Journal keeps what a crawl must not lose: the records Run writes as it
// goes, from which Load rebuilds it after a crash. A file (StateFile) in
// one process; JetStream across a cluster (crawljs). A journal kept
// under a job id names it with a JobID() string method, and a new crawl
// takes that id.
type Journal interface {
	// Load returns the records written so far, oldest first; none for a
	// new crawl.
	Load(ctx context.Context) ([]Record, error)
	// Append writes one record; it has reached the journal when Append
	// returns.
	Append(ctx context.Context, r Record) error
}

// Record is one step of a crawl, as its journal keeps it. Exactly one
// field is set.
type Record struct {
	// Begin opens the journal: which crawl it is.
	Begin *Begin `json:"begin,omitempty"`
	// Start says a page was taken from the frontier to be read.
	Start *Entry `json:"start,omitempty"`
	// Done says a page was answered and delivered, and what it added to
	// the frontier.
	Done *Done `json:"done,omitempty"`
	// End says the crawl stopped starting pages, and why.
	End string `json:"end,omitempty"`
}

// Begin names a crawl.
type Begin struct {
	ID string `json:"id"`
	// Fingerprint is a digest of the request: a journal resumes only the
	// crawl it was written for.
	Fingerprint string `json:"fingerprint"`
	URL         string `json:"url"`
	Start       Entry  `json:"start"`
}

// Done is one page answered.
type Done struct {
	Key string `json:"key"`
	// Final is the key of the URL the page was found at after redirects,
	// when it differs.
	Final  string `json:"final,omitempty"`
	Failed bool   `json:"failed,omitempty"`
	// Skipped: the page was read under another URL (a redirect to it was
	// claimed first), which delivers it; this one claims nothing.
	Skipped bool `json:"skipped,omitempty"`
	// Relevance and Present (the query words the page holds) restore the
	// ranking's state.
	Relevance float64  `json:"relevance,omitempty"`
	Present   []string `json:"present,omitempty"`
	// Queued are the links the page added to the frontier, or moved up.
	Queued []Entry `json:"queued,omitempty"`
}

// NewID returns a new job id: 16 hex digits.
func NewID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Fingerprint is the digest of a request a journal is tied to.
func Fingerprint(req Request) string {
	h := sha256.New()
	opts, _ := proto.MarshalOptions{Deterministic: true}.Marshal(cloneOpts(req.Options))
	req.Options = nil
	b, _ := json.Marshal(req)
	h.Write(b)
	h.Write(opts)
	return hex.EncodeToString(h.Sum(nil)[:12])
}

func cloneOpts(o *distillv1.FetchOptions) *distillv1.FetchOptions {
	if o == nil {
		return &distillv1.FetchOptions{}
	}
	return proto.CloneOf(o)
}

// StateFile is a Journal in a file of JSON lines (--crawl-state). Each
// record is one write of one line, so a process killed at any moment
// leaves at most its last line cut short, which Load drops.
type StateFile struct {
	mu     sync.Mutex
	f      *os.File
	name   string
	closed bool
}

// OpenStateFile opens or creates the journal at name.
func OpenStateFile(name string) (*StateFile, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--crawl-state: %w", err)
	}
	return &StateFile{f: f, name: name}, nil
}

// Load reads the records and leaves the file ready to append after the
// last whole one.
func (s *StateFile) Load(context.Context) ([]Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	var out []Record
	var good int64
	r := bufio.NewReader(s.f)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			// A line without its newline is a write the crash cut.
			break
		}
		if err != nil {
			return nil, fmt.Errorf("--crawl-state %s: %w", s.name, err)
		}
		var rec Record
		if err := json.Unmarshal(bytes.TrimSpace(line), &rec); err != nil {
			return nil, fmt.Errorf("--crawl-state %s line %d is not a crawl's record: %v", s.name, n, err)
		}
		out = append(out, rec)
		good += int64(len(line))
	}
	if err := s.f.Truncate(good); err != nil {
		return nil, fmt.Errorf("--crawl-state %s: %w", s.name, err)
	}
	if _, err := s.f.Seek(good, io.SeekStart); err != nil {
		return nil, err
	}
	return out, nil
}

// Append writes r as one line.
func (s *StateFile) Append(_ context.Context, r Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("--crawl-state %s: %w", s.name, err)
	}
	return nil
}

// Close closes the file; closing it again does nothing.
func (s *StateFile) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return s.f.Close()
}

// ValidID reports whether id is one NewID could have made, and so safe in
// a NATS subject or a file name.
func ValidID(id string) bool {
	if len(id) != 16 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil && strings.ToLower(id) == id
}

// memoryJournal keeps a crawl's records nowhere: a crawl without a state
// file cannot be resumed.
type memoryJournal struct{}

func (memoryJournal) Load(context.Context) ([]Record, error) { return nil, nil }
func (memoryJournal) Append(context.Context, Record) error   { return nil }
