package mapsite

import (
	"context"
	"net/url"
	"path"
	"strings"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/pipeline"
	"distill.dev/services/fetcher/siteurl"
)

// page is one page the map read: its answer, or why there is none.
type page struct {
	url *url.URL
	res *pipeline.Result
	err error
}

// pageOptions read a page for its links: every link of the page, no
// browser, and the cheapest profile.
func (r *run) pageOptions() *distillv1.FetchOptions {
	return &distillv1.FetchOptions{
		AllowLocal:    r.base.GetAllowLocal(),
		RespectRobots: r.base.GetRespectRobots(),
		RateLimit:     r.base.GetRateLimit(),
		TimeoutSecs:   r.base.TimeoutSecs,
		Browser:       r.base.GetBrowser(),
		LinksFull:     true,
		Js:            distillv1.JsMode_JS_MODE_OFF,
		Profile:       distillv1.Profile_PROFILE_METADATA,
		Format:        distillv1.Format_FORMAT_TEXT,
	}
}

// read fetches one page in its host's turn.
func (r *run) read(ctx context.Context, u *url.URL) page {
	p := page{url: u}
	p.err = r.pacer.do(ctx, u.Hostname(), func() error {
		var err error
		p.res, err = r.m.pages.Do(ctx, pipeline.Request{URL: u.String(), Options: r.pageOptions()})
		return err
	})
	if p.err != nil {
		p.err = failure.FromRemote(p.err)
	}
	r.res.PagesRead++
	return p
}

// final is where a page that answered ended up, canonical; nil when it
// failed, answered an error status, or named no usable URL.
func (p page) final() *url.URL {
	if p.err != nil || p.res.Distilled.GetStatus() >= 400 {
		return nil
	}
	u, err := siteurl.Canonical(p.res.Distilled.GetFinalUrl())
	if err != nil {
		return nil
	}
	return u
}

// rebase moves the map to the host the start page redirected to when it
// is the same site under its www. name or without it, the most common
// redirect of a home page; a map of example.com would otherwise find
// nothing of www.example.com. A redirect to another site is noted and not
// followed: it may be a login page, and the user can map it by name.
func (r *run) rebase(start page) bool {
	final := start.final()
	if final == nil || final.Host == r.start.Host {
		return false
	}
	if strings.TrimPrefix(final.Host, "www.") != strings.TrimPrefix(r.start.Host, "www.") {
		r.note("%s redirects to %s, another site; it is not mapped (map that URL to list it)", r.start, final)
		return false
	}
	scope, err := siteurl.NewScope(final.String(), r.req.Scope)
	if err != nil {
		return false
	}
	r.note("%s redirects to %s; mapped %s", r.start, final, final.Host)
	r.start, r.scope = final, scope
	return true
}

// crawl reads up to budget pages (the start page, already read, among
// them) breadth first, keeping every in-scope link it meets and following
// those that may be visited and look like pages. A page that answers an
// error status is taken back out. The error is the start page's failure,
// for a map that finds nothing else.
func (r *run) crawl(ctx context.Context, budget int, start page) error {
	queue := []page{start}
	visited := map[string]bool{siteurl.KeyOf(start.url): true}
	if f := start.final(); f != nil {
		visited[siteurl.KeyOf(f)] = true
	}
	failed := 0
	var firstFailure string
	for len(queue) > 0 && ctx.Err() == nil {
		p := queue[0]
		queue = queue[1:]
		if p.res == nil && p.err == nil {
			if r.res.PagesRead >= budget {
				queue = append([]page{p}, queue...)
				break
			}
			p = r.read(ctx, p.url)
		}
		if p.err != nil {
			if failure.CodeOf(p.err) != failure.RobotsDisallowed {
				failed++
				if firstFailure == "" {
					firstFailure = strings.Join(strings.Fields(p.err.Error()), " ")
				}
			}
			continue
		}
		final := p.final()
		if final == nil {
			r.drop(p.url)
			if u, err := siteurl.Canonical(p.res.Distilled.GetFinalUrl()); err == nil {
				r.drop(u)
			}
			continue
		}
		// A redirect off the site leads nowhere the map goes. The start
		// page is read for its links even outside the path prefix or
		// the patterns: it is where the walk begins.
		if !r.scope.MayVisit(final) && !(p.url == start.url && r.scope.OnSite(final)) {
			continue
		}
		visited[siteurl.KeyOf(final)] = true
		if !r.add(ctx, final) {
			break
		}
		for _, l := range p.res.Distilled.GetLinks().GetItems() {
			lu, err := siteurl.Canonical(l.GetHref())
			if err != nil {
				continue
			}
			if !r.add(ctx, lu) {
				break
			}
			key := siteurl.KeyOf(lu)
			if visited[key] || !r.scope.MayVisit(lu) || !looksLikePage(lu) || !r.allowed(ctx, lu) {
				continue
			}
			visited[key] = true
			queue = append(queue, page{url: lu})
		}
		if r.full {
			break
		}
	}
	if failed > 0 {
		r.note("pages of the crawl that could not be read: %d; the first: %s", failed, firstFailure)
	}
	if len(queue) > 0 && r.res.PagesRead >= budget && !r.full {
		r.note("the crawl read its --map-pages budget of %d; links found but not followed: %d", budget, len(queue))
	}
	return start.err
}

// files names extensions of links that are not pages: listed when in
// scope, never fetched for links.
var files = map[string]bool{
	".pdf": true, ".zip": true, ".gz": true, ".tgz": true, ".tar": true, ".7z": true, ".rar": true,
	".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true, ".svg": true, ".ico": true, ".avif": true,
	".mp3": true, ".mp4": true, ".webm": true, ".mov": true, ".avi": true, ".wav": true, ".ogg": true,
	".css": true, ".js": true, ".woff": true, ".woff2": true, ".ttf": true, ".exe": true, ".dmg": true, ".apk": true,
	".doc": true, ".docx": true, ".xls": true, ".xlsx": true, ".ppt": true, ".pptx": true, ".csv": true,
}

func looksLikePage(u *url.URL) bool {
	return !files[strings.ToLower(path.Ext(u.Path))]
}
