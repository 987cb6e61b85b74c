package crawl

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/fetch"
	"distill.dev/services/fetcher/pace"
	"distill.dev/services/fetcher/pipeline"
	"distill.dev/services/fetcher/robots"
	"distill.dev/services/fetcher/siteurl"
	"distill.dev/services/platform/relevance"
)

// read fetches one page in its host's turn, follows what it links to and
// returns the page to deliver (nil for none) and its journal record.
func (j *Job) read(ctx context.Context, e Entry) (*Page, *Done) {
	d := &Done{Key: e.Key}
	u, err := url.Parse(e.URL)
	if err != nil {
		d.Failed = true
		return &Page{URL: e.URL, Depth: e.Depth, Err: failure.Wrap(failure.InvalidURL, err, "crawl %s", display(e.URL))}, d
	}
	rules := j.rules(ctx, u)
	if !j.req.IgnoreRobots {
		if v := rules.agent.Check(u); !v.Allowed {
			d.Failed = true
			return &Page{URL: e.URL, Depth: e.Depth, Err: failure.New(failure.RobotsDisallowed, "crawl %s: disallowed by robots.txt (%s)", e.URL, v)}, d
		}
	}
	isStart := e.Depth == 0
	res, err := j.readPage(ctx, e, rules.interval, isStart)
	if _, ok := errors.AsType[*AlreadyRead](err); ok {
		// It redirects to a page read, or being read, on its own, or (in
		// a cluster) it was claimed by another page's redirect, which
		// delivers it: this one delivers nothing, and claims nothing.
		d.Skipped = true
		return nil, d
	}
	if err != nil {
		d.Failed = true
		return &Page{URL: e.URL, Depth: e.Depth, Err: failure.FromRemote(err)}, d
	}
	dist := res.Distilled
	final, ferr := siteurl.Canonical(dist.GetFinalUrl())
	if ferr != nil {
		final = u
	}
	if isStart {
		j.rebase(final)
	}
	// The page is claimed under the URL it ended at: a page reached again
	// by a redirect from another URL is delivered once, and a link to it
	// still waiting is not read.
	fk := siteurl.KeyOf(final)
	j.mu.Lock()
	dup := j.finals[fk]
	j.finals[fk] = true
	j.front.started(fk)
	j.mu.Unlock()
	if fk != e.Key {
		d.Final = fk
	}
	if dup {
		return nil, d
	}
	var rel float64
	if j.rank != nil {
		text := pageText(dist)
		d.Present = j.rank.present(text)
		j.mu.Lock()
		rel = j.rank.relevance(relevance.Words(dist.GetTitle()), text, d.Present)
		j.mu.Unlock()
		d.Relevance = rel
		dist.Relevance = &rel
	}
	if dist.GetStatus() < 400 && e.Depth < j.req.Depth {
		d.Queued = j.links(ctx, dist, e.Depth+1, rel, d.Present)
	}
	j.trimLinks(dist)
	if !j.currentScope().Contains(final) {
		// Read for its links only: outside --include-paths.
		return nil, d
	}
	return &Page{URL: e.URL, Depth: e.Depth, Result: dist}, d
}

// unavailableRetries are the waits before asking again for a page when a
// service it goes through (a fetcher, an extractor) is away: a service
// restarting, or a fetcher killed mid-crawl, must not cost the crawl its
// pages. A service that went away during the call (failure.Internal) may
// have been killed by the page itself, so such a page is asked for once
// more only.
var unavailableRetries = []time.Duration{time.Second, 3 * time.Second, 5 * time.Second}

// readPage reads one page, each of its requests in its host's turn,
// judging its redirects, and asks again while a service it goes through
// is away.
func (j *Job) readPage(ctx context.Context, e Entry, interval time.Duration, isStart bool) (*pipeline.Result, error) {
	raw := e.URL
	v := pageVisit{j: j, e: e, interval: interval, isStart: isStart, work: Work{
		JobID: j.id, Key: e.Key, URL: raw, Depth: e.Depth, Start: j.start.String(), ScopeURL: j.currentScope().Root(),
		Scope: j.req.Scope, FromStart: isStart, Interval: interval, Delay: j.req.Delay,
	}}
	for attempt := 0; ; attempt++ {
		res, err := j.c.pages.Read(ctx, raw, j.opts, v)
		if err == nil {
			return res, j.judgeHops(res, isStart)
		}
		if _, ok := errors.AsType[*AlreadyRead](err); ok {
			// An answer, not a failure: asking again reads nothing more.
			return nil, err
		}
		code := failure.CodeOf(err)
		again := code == failure.Unavailable && attempt < len(unavailableRetries) ||
			code == failure.Internal && attempt == 0
		if !again || ctx.Err() != nil {
			return nil, err
		}
		if j.c.logger != nil {
			j.c.logger.Info("crawl page: a service is away; asking again", "url", raw, "err", err.Error())
		}
		if err := sleepUntil(ctx, time.Now().Add(unavailableRetries[attempt])); err != nil {
			return nil, failure.Wrap(failure.Canceled, err, "crawl %s", raw)
		}
	}
}

// pageVisit is a page's visit as the crawl's own process makes it: each
// redirect judged against the crawl's scope and claimed, each request in
// its host's turn on the crawl's pacer.
type pageVisit struct {
	j *Job
	e Entry
	// interval is the pace of the page's own host.
	interval time.Duration
	isStart  bool
	work     Work
}

func (v pageVisit) Follow(_ context.Context, to *url.URL) error {
	if err := v.j.mayFollow(to, v.isStart); err != nil {
		return err
	}
	return v.j.claimHop(to, v.e.Key)
}

func (v pageVisit) Turn(ctx context.Context, u *url.URL) error {
	return v.j.c.pacer.Turn(ctx, u.Hostname(), v.j.intervalOf(u, v.e.URL, v.interval))
}

func (v pageVisit) Sent(ctx context.Context, u *url.URL, at time.Time) {
	v.j.c.pacer.Sent(ctx, u.Hostname(), v.j.intervalOf(u, v.e.URL, v.interval), at)
}

func (v pageVisit) BeforeRender(ctx context.Context) error {
	// The browser's request for the page goes out right after.
	host := hostOf(v.e.URL)
	err := v.j.c.pacer.Turn(ctx, host, v.interval)
	if err == nil {
		v.j.c.pacer.Sent(ctx, host, v.interval, time.Now())
	}
	return err
}

// Robots leaves robots.txt to the reader's fetcher, whose cache the
// crawl's own reads of it share (New).
func (v pageVisit) Robots(context.Context, *url.URL) (*robots.Robots, bool, error) {
	return nil, false, nil
}

func (v pageVisit) Work() Work { return v.work }

// intervalOf is the pace of u's host for a request of the page at raw:
// the page's own host's interval, or, for a host a redirect leads to, the
// interval its robots.txt gave if the crawl read it, else --delay.
func (j *Job) intervalOf(u *url.URL, raw string, interval time.Duration) time.Duration {
	if strings.EqualFold(u.Hostname(), hostOf(raw)) {
		return interval
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if h := j.hosts[u.Host]; h != nil {
		return max(h.interval, j.req.Delay)
	}
	return j.req.Delay
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// rules returns what robots.txt says of u's host, reading it the first
// time the crawl meets the host, in the host's turn like any request.
func (j *Job) rules(ctx context.Context, u *url.URL) *hostRules {
	j.mu.Lock()
	h := j.hosts[u.Host]
	if h == nil {
		h = &hostRules{interval: j.req.Delay, agent: robots.AllowAll("").For(fetch.ProductToken)}
		j.hosts[u.Host] = h
	}
	j.mu.Unlock()
	if j.req.IgnoreRobots {
		return h
	}
	h.once.Do(func() {
		file, answered, err := j.readRobots(ctx, u)
		if err != nil {
			// The page's own fetch reads robots.txt again and fails with
			// the reason, which is what the caller will see.
			return
		}
		h.agent = file.For(fetch.ProductToken)
		if d := h.agent.CrawlDelay(); d > h.interval {
			// Under the lock: intervalOf reads it for a redirect's host.
			j.mu.Lock()
			h.interval = d
			j.mu.Unlock()
			j.note("%s asks for a Crawl-delay of %s, longer than --delay; it is kept", u.Host, d)
			// robots.txt itself took a turn at --delay: the host's first
			// page waits out the Crawl-delay from it, counted from its
			// answer (its request left before).
			_ = sleepUntil(ctx, answered.Add(pace.Spacing(d)))
		}
	})
	return h
}

// readRobots reads u's robots.txt in its host's turn, and says when its
// answer came.
func (j *Job) readRobots(ctx context.Context, u *url.URL) (*robots.Robots, time.Time, error) {
	if wr, ok := j.c.robots.(WorkRobotsReader); ok {
		// A worker reads it in the host's turn, as it reads pages.
		file, err := wr.WorkRobots(ctx, Work{
			JobID: j.id, URL: u.String(), Start: j.start.String(), ScopeURL: j.currentScope().Root(),
			Scope: j.req.Scope, Interval: j.req.Delay, Delay: j.req.Delay,
		}, j.opts)
		return file, time.Now(), err
	}
	if err := j.c.pacer.Turn(ctx, u.Hostname(), j.req.Delay); err != nil {
		return nil, time.Time{}, err
	}
	file, err := j.c.robots.Robots(ctx, u.String(), j.opts)
	// The request went out somewhere between the turn and the answer (in
	// another process, for a remote fetcher): the next turn counts from
	// the answer, which is surely after it.
	answered := time.Now()
	j.c.pacer.Sent(ctx, u.Hostname(), j.req.Delay, answered)
	return file, answered, err
}

// AlreadyRead refuses a redirect to a page the crawl has read, or is
// reading, under another URL (its own, or one that redirects to it):
// following it would fetch the page twice. A page refused so delivers
// nothing; the page that claimed its target delivers it.
type AlreadyRead struct{ Key string }

func (a *AlreadyRead) Error() string {
	return "leads to " + a.Key + ", a page the crawl reads under another URL"
}

// claimHop claims the page a redirect of the page own leads to, before
// the hop is taken: a page read or being read is refused, one still
// queued is taken out of the queue, so that it is fetched once.
func (j *Job) claimHop(to *url.URL, own string) error {
	u, err := siteurl.Canonical(to.String())
	if err != nil {
		return nil
	}
	key := siteurl.KeyOf(u)
	if key == own {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.finals[key] || j.front.known(key) && j.front.found[key] == nil {
		return &AlreadyRead{Key: key}
	}
	j.front.started(key)
	return nil
}

// errOutOfScope is a redirect to a URL the crawl does not cover.
var errOutOfScope = errors.New("outside the crawl's scope")

// mayFollow judges a redirect hop against the crawl's current scope.
func (j *Job) mayFollow(to *url.URL, fromStart bool) error {
	return mayFollow(j.currentScope(), j.start, to, fromStart)
}

// mayFollow judges a redirect hop: within the scope (the start page may
// also move to its host's www. twin), and allowed by robots.txt.
func mayFollow(scope *siteurl.Scope, start, to *url.URL, fromStart bool) error {
	u, err := siteurl.Canonical(to.String())
	if err != nil {
		return err
	}
	if !scope.MayVisit(u) && !(fromStart && (scope.OnSite(u) || siteurl.WWWTwins(u, start))) {
		return errOutOfScope
	}
	return nil
}

// judgeHops applies mayFollow to a page's redirects after the fact, for a
// reader that could not ask it before each hop.
func (j *Job) judgeHops(res *pipeline.Result, fromStart bool) error {
	hops := append(append([]string(nil), res.RedirectHistory...), res.Distilled.GetFinalUrl())
	for i := 1; i < len(hops); i++ {
		u, err := url.Parse(hops[i])
		if err != nil {
			continue
		}
		if err := j.mayFollow(u, fromStart); err != nil {
			return failure.Wrap(failure.Blocked, err, "fetch %s: redirect to %s not followed", display(hops[i-1]), display(hops[i]))
		}
	}
	return nil
}

// currentScope is the crawl's scope, which rebase may move.
func (j *Job) currentScope() *siteurl.Scope {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.scope
}

// rebase moves the crawl to the host its start page redirected to, when
// that is the same site under its www. name or without it.
func (j *Job) rebase(final *url.URL) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.rebased || final.Host == j.start.Host || !siteurl.WWWTwins(final, j.start) {
		return
	}
	scope, err := siteurl.NewScope(final.String(), j.req.Scope)
	if err != nil {
		return
	}
	j.rebased = true
	j.scope = scope
	j.notes = append(j.notes, fmt.Sprintf("%s redirects to %s; crawled %s", j.start, final, final.Host))
}

// links queues what a page links to that the crawl may read, scored when
// it has a query. Links are read from the page's extracted links; their
// paragraphs from its Markdown or text.
func (j *Job) links(ctx context.Context, d *distillv1.Distilled, depth int, parent float64, present []string) []Entry {
	var paras []string
	if j.rank != nil {
		paras = paragraphs(d.GetMarkdown() + "\n\n" + d.GetText())
	}
	scope := j.currentScope()
	var out []Entry
	seen := map[string]int{}
	for _, l := range d.GetLinks().GetItems() {
		lu, err := siteurl.Canonical(l.GetHref())
		if err != nil || !scope.MayVisit(lu) || !looksLikePage(lu) {
			continue
		}
		if !j.req.IgnoreRobots && !j.rules(ctx, lu).agent.Check(lu).Allowed {
			j.mu.Lock()
			j.disallowed[siteurl.KeyOf(lu)] = true
			j.mu.Unlock()
			continue
		}
		e := Entry{URL: lu.String(), Key: siteurl.KeyOf(lu), Depth: depth}
		if j.rank != nil {
			j.mu.Lock()
			e.Score = j.rank.link(l.GetText(), lu.Path, contextOf(paras, l.GetHref(), l.GetText()), parent, present)
			j.mu.Unlock()
		}
		if i, ok := seen[e.Key]; ok {
			out[i].Score = max(out[i].Score, e.Score)
			continue
		}
		j.mu.Lock()
		known := j.front.known(e.Key) && !j.improves(e)
		j.mu.Unlock()
		if known {
			continue
		}
		seen[e.Key] = len(out)
		out = append(out, e)
	}
	return out
}

// improves reports whether e would move up a URL still waiting. Called
// with j.mu held.
func (j *Job) improves(e Entry) bool {
	old := j.front.found[e.Key]
	return old != nil && (e.Score > old.Score || e.Depth < old.Depth)
}

// trimLinks takes back out of a page the links the crawl asked for and
// the caller did not: all of them without --links, the ones outside the
// main content with --links alone.
func (j *Job) trimLinks(d *distillv1.Distilled) {
	switch {
	case !j.userOpts.GetExtractLinks():
		d.Links = nil
	case !j.userOpts.GetLinksFull():
		content := d.GetMarkdown()
		var kept []*distillv1.Link
		for _, l := range d.GetLinks().GetItems() {
			if strings.Contains(content, "]("+l.GetHref()) {
				kept = append(kept, l)
			}
		}
		d.Links.Items = kept
	}
}

// pageText is the words a page is rated by: its title and content.
func pageText(d *distillv1.Distilled) []string {
	return relevance.Words(d.GetTitle() + "\n" + d.GetMarkdown() + "\n" + d.GetText())
}

// files names extensions of links that are not pages: a crawl does not
// read them.
var files = map[string]bool{
	".zip": true, ".gz": true, ".tgz": true, ".tar": true, ".7z": true, ".rar": true,
	".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true, ".svg": true, ".ico": true, ".avif": true,
	".mp3": true, ".mp4": true, ".webm": true, ".mov": true, ".avi": true, ".wav": true, ".ogg": true,
	".css": true, ".js": true, ".woff": true, ".woff2": true, ".ttf": true, ".exe": true, ".dmg": true, ".apk": true,
	".doc": true, ".docx": true, ".xls": true, ".xlsx": true, ".ppt": true, ".pptx": true, ".csv": true,
	".xml": true, ".json": true, ".txt": true,
}

func looksLikePage(u *url.URL) bool {
	return !files[strings.ToLower(pathExt(u.Path))]
}

func pathExt(p string) string {
	i := strings.LastIndexAny(p, "./")
	if i < 0 || p[i] != '.' {
		return ""
	}
	return p[i:]
}

// display keeps a URL on one line in messages.
func display(raw string) string {
	if strings.IndexFunc(raw, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return fmt.Sprintf("%q", raw)
	}
	return raw
}

// sleepUntil waits until at or the end of ctx.
func sleepUntil(ctx context.Context, at time.Time) error {
	wait := time.Until(at)
	if wait <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
