// Package cache keeps fetch answers on disk so that a page asked for twice
// within its freshness window is fetched once. Entries are whole
// FetcherServiceFetchResponse values, never response headers, so nothing a
// server meant for one client (Set-Cookie, auth challenges) is kept.
//
// Several processes may share a directory: every write is a temp file in
// the entry's own directory renamed over the entry, so a reader sees the old
// entry or the new one, never a mix, and no lock is needed.
package cache

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
)

// entriesDir holds the entries under the cache directory. Its name carries
// the format version, so a future format starts empty beside this one
// instead of misreading it.
const entriesDir = "fetch-v1"

const (
	tempPrefix = ".tmp-"
	// tempGrace is how old a temp file must be before Prune or Clear takes
	// it for the leftover of a crashed writer rather than a write in flight.
	tempGrace = time.Hour
)

// Entry is one cached answer.
type Entry struct {
	Response *internalv1.FetcherServiceFetchResponse
	StoredAt time.Time
}

// Cache is an on-disk cache directory. Its methods are safe for concurrent
// use, also by other processes on the same directory.
type Cache struct {
	dir string
	now func() time.Time
}

// Option configures a Cache.
type Option func(*Cache)

// WithClock sets the clock that stamps and ages entries. Tests use it.
func WithClock(now func() time.Time) Option {
	return func(c *Cache) { c.now = now }
}

// DefaultDir returns distill under the user's cache directory. The mains
// let an operator choose another (--cache-dir, DISTILL_CACHE_DIR).
func DefaultDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("cache dir: %w (choose one with --cache-dir)", err)
	}
	return filepath.Join(base, "distill"), nil
}

// Open opens the cache in dir, or in DefaultDir when dir is empty, creating
// it if needed. It fails when the directory cannot be written, so a caller
// learns at start rather than on every fetch.
func Open(dir string, opts ...Option) (*Cache, error) {
	if dir == "" {
		d, err := DefaultDir()
		if err != nil {
			return nil, err
		}
		dir = d
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("cache dir %s: %w", dir, err)
	}
	c := &Cache{dir: dir, now: time.Now}
	for _, o := range opts {
		o(c)
	}
	if err := os.MkdirAll(filepath.Join(dir, entriesDir), 0o700); err != nil {
		return nil, fmt.Errorf("cache dir %s: %w", dir, err)
	}
	probe, err := os.CreateTemp(filepath.Join(dir, entriesDir), tempPrefix)
	if err != nil {
		return nil, fmt.Errorf("cache dir %s is not writable: %w", dir, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	return c, nil
}

// Dir is the cache directory.
func (c *Cache) Dir() string { return c.dir }

// Key names the entry for a request of u. Only the URL is in it: no
// FetchOptions field changes the bytes of a successful answer, and those
// that decide whether an answer may be given are checked when it is read:
//   - allow_local: the caller re-checks its network policy against the
//     entry's URLs on every hit.
//   - max_bytes: a body cut at a caller's cap is never stored, and an entry
//     whose body exceeds a caller's cap is served cut to it (see Fits).
//   - no_cache and cache_ttl: whether and how fresh, not what.
//   - timeouts, retries, rate and per-host limits: how, not what.
//
// Everything after the fetch (format, profile, selector, js) works on the
// answer and is not the cache's concern. The fragment is dropped: it never
// reaches the server.
func Key(u *url.URL) string {
	v := *u
	v.Fragment, v.RawFragment = "", ""
	sum := sha256.Sum256([]byte(v.String()))
	return hex.EncodeToString(sum[:])
}

// Storable reports whether an answer may be cached: successes and final
// redirects (a 3xx without a Location to follow). Errors are answers that
// may change any second and are never kept.
func Storable(resp *internalv1.FetcherServiceFetchResponse) bool {
	return resp.GetStatus() >= 200 && resp.GetStatus() < 400
}

// Fits reports whether e's body is within a caller's byte cap.
func (e *Entry) Fits(maxBytes int64) bool {
	return int64(len(e.Response.GetBody())) <= maxBytes
}

func validKey(key string) bool {
	if len(key) != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(key)
	return err == nil
}

func (c *Cache) path(key string) string {
	return filepath.Join(c.dir, entriesDir, key[:2], key)
}

// Get returns the entry for key if it is younger than maxAge. A maxAge of
// zero or less finds nothing. An entry that cannot be read whole is removed
// and counts as a miss.
func (c *Cache) Get(key string, maxAge time.Duration) (*Entry, bool) {
	if !validKey(key) || maxAge <= 0 {
		return nil, false
	}
	p := c.path(key)
	f, err := os.Open(p)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	storedAt, payload, err := readEntry(f, true)
	if err != nil {
		c.removeIfSame(p, f)
		return nil, false
	}
	if age := c.now().Sub(storedAt); age < 0 || age >= maxAge {
		return nil, false
	}
	resp := &internalv1.FetcherServiceFetchResponse{}
	if err := proto.Unmarshal(payload, resp); err != nil {
		c.removeIfSame(p, f)
		return nil, false
	}
	return &Entry{Response: resp, StoredAt: storedAt}, true
}

// removeIfSame removes the bad entry at p unless another process has
// meanwhile renamed a new one there.
func (c *Cache) removeIfSame(p string, f *os.File) {
	opened, err1 := f.Stat()
	now, err2 := os.Lstat(p)
	if err1 == nil && err2 == nil && os.SameFile(opened, now) {
		os.Remove(p)
	}
}

// Put stores resp under key, replacing any entry. Answers that Storable
// refuses are not stored and are no error. from_cache is not stored: it
// describes a reply, not the page.
func (c *Cache) Put(key string, resp *internalv1.FetcherServiceFetchResponse) error {
	if !validKey(key) {
		return fmt.Errorf("cache put: bad key %q", key)
	}
	if !Storable(resp) {
		return nil
	}
	r := proto.CloneOf(resp)
	r.FromCache = false
	payload, err := proto.Marshal(r)
	if err != nil {
		return fmt.Errorf("cache put: %w", err)
	}
	dir := filepath.Dir(c.path(key))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cache put: %w", err)
	}
	tmp, err := os.CreateTemp(dir, tempPrefix+key[:8]+"-")
	if err != nil {
		return fmt.Errorf("cache put: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(encodeEntry(c.now(), payload)); err != nil {
		return fmt.Errorf("cache put: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("cache put: %w", err)
	}
	if err := os.Rename(tmp.Name(), c.path(key)); err != nil {
		return fmt.Errorf("cache put: %w", err)
	}
	ok = true
	return nil
}

// Info counts the entries and their bytes on disk.
func (c *Cache) Info() (entries, bytes int64, err error) {
	err = c.walk(func(_ string, info fs.FileInfo) error {
		entries++
		bytes += info.Size()
		return nil
	})
	return entries, bytes, err
}

// Prune removes entries stored olderThan ago or earlier, and entries that
// cannot be read.
func (c *Cache) Prune(olderThan time.Duration) (removed, freed int64, err error) {
	cutoff := c.now().Add(-olderThan)
	err = c.walk(func(p string, info fs.FileInfo) error {
		if storedAt, err := readStoredAt(p); err == nil && storedAt.After(cutoff) {
			return nil
		}
		return c.remove(p, info, &removed, &freed)
	})
	return removed, freed, err
}

// Clear removes every entry.
func (c *Cache) Clear() (removed, freed int64, err error) {
	err = c.walk(func(p string, info fs.FileInfo) error {
		return c.remove(p, info, &removed, &freed)
	})
	return removed, freed, err
}

func (c *Cache) remove(p string, info fs.FileInfo, removed, freed *int64) error {
	if err := os.Remove(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			// Another process got there first.
			return nil
		}
		return fmt.Errorf("cache: %w", err)
	}
	*removed++
	*freed += info.Size()
	return nil
}

// walk calls entry for each entry file, and removes temp files left by
// writers that died before their rename.
func (c *Cache) walk(entry func(path string, info fs.FileInfo) error) error {
	root := filepath.Join(c.dir, entriesDir)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		name := d.Name()
		if strings.HasPrefix(name, tempPrefix) {
			if c.now().Sub(info.ModTime()) > tempGrace {
				os.Remove(p)
			}
			return nil
		}
		if !validKey(name) {
			return nil
		}
		return entry(p, info)
	})
	if err != nil {
		return fmt.Errorf("cache %s: %w", c.dir, err)
	}
	return nil
}

// The entry format: a fixed header, then the protobuf-encoded answer.
//
//	magic "DSTL" | version 1 | stored-at unix ns, int64 | payload length,
//	uint64 | CRC-32C of the payload | payload
//
// The length and checksum turn a truncated or damaged file into a miss
// instead of a wrong page.
const (
	magic      = "DSTL"
	version    = 1
	headerSize = len(magic) + 1 + 8 + 8 + 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func encodeEntry(storedAt time.Time, payload []byte) []byte {
	b := make([]byte, headerSize, headerSize+len(payload))
	copy(b, magic)
	b[4] = version
	binary.BigEndian.PutUint64(b[5:], uint64(storedAt.UnixNano()))
	binary.BigEndian.PutUint64(b[13:], uint64(len(payload)))
	binary.BigEndian.PutUint32(b[21:], crc32.Checksum(payload, castagnoli))
	return append(b, payload...)
}

var errCorrupt = errors.New("corrupt cache entry")

// readEntry reads the header and, if withPayload, the checked payload.
func readEntry(r io.Reader, withPayload bool) (time.Time, []byte, error) {
	var h [headerSize]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return time.Time{}, nil, errCorrupt
	}
	if string(h[:4]) != magic || h[4] != version {
		return time.Time{}, nil, errCorrupt
	}
	storedAt := time.Unix(0, int64(binary.BigEndian.Uint64(h[5:])))
	if !withPayload {
		return storedAt, nil, nil
	}
	n := binary.BigEndian.Uint64(h[13:])
	// One byte past the declared length tells a file with trailing bytes
	// from a good one without trusting n for an allocation.
	payload, err := io.ReadAll(io.LimitReader(r, int64(min(n, 1<<40))+1))
	if err != nil || uint64(len(payload)) != n {
		return time.Time{}, nil, errCorrupt
	}
	if crc32.Checksum(payload, castagnoli) != binary.BigEndian.Uint32(h[21:]) {
		return time.Time{}, nil, errCorrupt
	}
	return storedAt, payload, nil
}

func readStoredAt(p string) (time.Time, error) {
	f, err := os.Open(p)
	if err != nil {
		return time.Time{}, err
	}
	defer f.Close()
	t, _, err := readEntry(f, false)
	return t, err
}

// Seconds converts a count of seconds from a flag or request to a
// Duration, saturating instead of wrapping for counts past ~292 years.
func Seconds(secs int64) time.Duration {
	if secs > math.MaxInt64/int64(time.Second) {
		return math.MaxInt64
	}
	return time.Duration(secs) * time.Second
}
