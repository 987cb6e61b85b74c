package sitemap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"distill.dev/services/fetcher/siteurl"
)

// Limits bound one walk over a site's sitemaps.
type Limits struct {
	// URLsPerFile and FileBytes bound each file: the protocol's 50,000
	// URLs and 50 MB uncompressed by default.
	URLsPerFile int
	FileBytes   int64
	// Depth is how many levels of indexes are followed below the first
	// file. The protocol allows one; nested indexes exist, loops too.
	Depth int
	// Files is how many sitemap files one walk reads at most.
	Files int
}

// DefaultLimits are the protocol's limits per file, three levels of
// indexes and 200 files a walk.
func DefaultLimits() Limits {
	return Limits{URLsPerFile: MaxURLsPerFile, FileBytes: MaxFileBytes, Depth: 3, Files: 200}
}

// Fetched is a sitemap as the network answered it.
type Fetched struct {
	Status int
	Body   []byte
	// Truncated is set when the body was cut by the fetch's own byte cap.
	Truncated bool
}

// Getter fetches a sitemap file. It is the caller's so that sitemaps are
// read under the same network policy, robots.txt, limits and per-host
// pacing as the site's pages.
type Getter func(ctx context.Context, rawURL string) (*Fetched, error)

// Source is a sitemap to start from.
type Source struct {
	URL string
	// DeclaredBy is the canonical host whose robots.txt names the sitemap.
	// Declaring it there vouches for every URL of that host, wherever the
	// sitemap itself is kept (the protocol's cross-submission rule).
	DeclaredBy string
	// Guessed marks a sitemap tried at a usual path: that it is missing or
	// is no sitemap is no news, and is not noted.
	Guessed bool
}

// Report is what a walk did besides finding URLs.
type Report struct {
	// Read counts the sitemap files read successfully.
	Read int
	// Notes say, one line each, what was skipped or cut and why.
	Notes []string
}

// authority is where a sitemap may list URLs: a host, and a path every
// URL must start with.
type authority struct{ host, dir string }

func (a authority) covers(u *url.URL) bool {
	return u.Host == a.host && strings.HasPrefix(u.EscapedPath(), a.dir)
}

type item struct {
	url, key    string
	depth       int
	authorities []authority
	guessed     bool
}

// Walk reads the sources and the sitemaps their indexes list, breadth
// first, and calls emit with each page URL, canonical, that its sitemap
// may list: a sitemap speaks for its own host, below its own directory
// (http and https alike), for the hosts whose robots.txt declares it, and,
// listed by an index, for what the index speaks for. Other URLs are
// dropped, as the protocol asks, so that one site cannot fill another's
// map. An index may list sitemaps of the hosts it speaks for only. Each
// file is read once however often it is listed, so loops end. The walk
// stops when emit returns false, when ctx ends, or at the limits.
func Walk(ctx context.Context, get Getter, sources []Source, limits Limits, emit func(*url.URL) bool) Report {
	w := &walker{get: get, limits: limits, emit: emit, seen: map[string]bool{}}
	for _, s := range sources {
		it, err := w.item(s.URL, 0, nil, s.Guessed)
		if err != nil {
			w.note("sitemap %s: %v", s.URL, err)
			continue
		}
		if s.DeclaredBy != "" {
			it.authorities = append(it.authorities, authority{host: s.DeclaredBy, dir: "/"})
		}
		w.enqueue(it)
	}
	for len(w.queue) > 0 && !w.stopped && ctx.Err() == nil {
		it := w.queue[0]
		w.queue = w.queue[1:]
		if w.report.Read+w.failed == limits.Files {
			w.note("read %d sitemap files, the limit; sitemaps listed but not read: %d", limits.Files, len(w.queue)+1)
			break
		}
		w.read(ctx, it)
	}
	return w.report
}

type walker struct {
	get     Getter
	limits  Limits
	emit    func(*url.URL) bool
	seen    map[string]bool
	queue   []item
	report  Report
	failed  int
	stopped bool
}

func (w *walker) note(format string, args ...any) {
	w.report.Notes = append(w.report.Notes, fmt.Sprintf(format, args...))
}

// item makes a queue entry for a sitemap URL: its own authority is its
// host and directory, added to what it inherits.
func (w *walker) item(raw string, depth int, inherited []authority, guessed bool) (item, error) {
	u, err := siteurl.Canonical(raw)
	if err != nil {
		return item{}, err
	}
	p := u.EscapedPath()
	dir := p[:strings.LastIndex(p, "/")+1]
	auth := append(append([]authority(nil), inherited...), authority{host: u.Host, dir: dir})
	return item{url: u.String(), key: siteurl.KeyOf(u), depth: depth, authorities: auth, guessed: guessed}, nil
}

func (w *walker) enqueue(it item) {
	if w.seen[it.key] {
		return
	}
	w.seen[it.key] = true
	w.queue = append(w.queue, it)
}

// read reads one sitemap file: its URLs are emitted, and an index's
// sitemaps are queued.
func (w *walker) read(ctx context.Context, it item) {
	f, err := w.get(ctx, it.url)
	switch {
	case err != nil:
		w.failed++
		if !it.guessed {
			w.note("sitemap %s: %v", it.url, err)
		}
		return
	case f.Status < 200 || f.Status > 299:
		w.failed++
		if !it.guessed {
			w.note("sitemap %s: answered HTTP %d", it.url, f.Status)
		}
		return
	}
	p := w.parse(it, f)
	if it.guessed && (errors.Is(p.err, ErrNotSitemap) || p.kind == Text && p.valid == 0) {
		w.failed++
		return
	}
	w.report.Read++
	w.noteFile(it, f, p)
	if p.kind != Index || w.stopped {
		return
	}
	w.follow(it, p.children)
}

// parsed is what one sitemap file held.
type parsed struct {
	kind Kind
	err  error
	// children are an index's sitemaps.
	children []string
	// valid, invalid and foreign count the locations that were URLs, were
	// not, and were URLs the file may not list.
	valid, invalid, foreign int
}

// parse reads f's locations, emitting the URLs it may list, and stops
// when emit says the walk has what it needs.
func (w *walker) parse(it item, f *Fetched) parsed {
	var p parsed
	p.kind, p.err = Parse(bytes.NewReader(f.Body), w.limits.URLsPerFile, w.limits.FileBytes, func(kind Kind, loc string) bool {
		if kind == Index {
			p.children = append(p.children, loc)
			return true
		}
		u, err := siteurl.Canonical(loc)
		if err != nil {
			// A guessed path that answers a page of prose is no text
			// sitemap: it is dropped by read, unread.
			if it.guessed && kind == Text && p.valid == 0 {
				return false
			}
			p.invalid++
			return true
		}
		p.valid++
		switch {
		case !covered(it.authorities, u):
			p.foreign++
		case !w.emit(u):
			w.stopped = true
			return false
		}
		return true
	})
	return p
}

// noteFile notes what of a file read was cut, broken or left out.
func (w *walker) noteFile(it item, f *Fetched, p parsed) {
	if f.Truncated {
		w.note("sitemap %s: cut by the fetch's byte cap; read what came before", it.url)
	}
	if p.err != nil {
		w.note("sitemap %s: %v", it.url, p.err)
	}
	if p.invalid > 0 {
		w.note("sitemap %s: locations that are not http(s) URLs: %d, skipped", it.url, p.invalid)
	}
	if p.foreign > 0 {
		w.note("sitemap %s: URLs outside the hosts and paths it may list: %d, dropped", it.url, p.foreign)
	}
}

// follow queues the sitemaps an index lists, within the depth limit and
// the hosts it speaks for, each once.
func (w *walker) follow(it item, children []string) {
	if it.depth == w.limits.Depth && len(children) > 0 {
		w.note("sitemap index %s: nested %d levels deep, the limit; sitemaps it lists, not read: %d", it.url, it.depth, len(children))
		return
	}
	for _, c := range children {
		child, err := w.item(c, it.depth+1, it.authorities, false)
		if err != nil {
			w.note("sitemap index %s lists %q: %v", it.url, c, err)
			continue
		}
		cu, _ := url.Parse(child.url)
		if !hostCovered(it.authorities, cu) {
			w.note("sitemap index %s lists %s, on a host it does not speak for; skipped", it.url, child.url)
			continue
		}
		if w.seen[child.key] {
			w.note("sitemap index %s lists %s, already read or queued; read once", it.url, child.url)
			continue
		}
		w.enqueue(child)
	}
}

func covered(auth []authority, u *url.URL) bool {
	for _, a := range auth {
		if a.covers(u) {
			return true
		}
	}
	return false
}

func hostCovered(auth []authority, u *url.URL) bool {
	for _, a := range auth {
		if a.host == u.Host {
			return true
		}
	}
	return false
}
