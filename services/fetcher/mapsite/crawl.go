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

// crawl reads up to budget pages breadth first from the start page,
// keeping every in-scope link it meets and following those that may be
// visited and look like pages. A page that answers an error status is
// taken back out. The error is the start page's failure, for a map that
// finds nothing else.
func (r *run) crawl(ctx context.Context, budget int) error {
	opts := &distillv1.FetchOptions{
		AllowLocal:    r.base.GetAllowLocal(),
		RespectRobots: r.base.GetRespectRobots(),
		RateLimit:     r.base.GetRateLimit(),
		TimeoutSecs:   r.base.TimeoutSecs,
		LinksFull:     true,
		// Links are what is read: no browser, and the cheapest profile.
		Js:      distillv1.JsMode_JS_MODE_OFF,
		Profile: distillv1.Profile_PROFILE_METADATA,
		Format:  distillv1.Format_FORMAT_TEXT,
	}
	queue := []*url.URL{r.start}
	visited := map[string]bool{siteurl.KeyOf(r.start): true}
	var startErr error
	failed := 0
	var firstFailure string
	for len(queue) > 0 && r.res.PagesRead < budget && ctx.Err() == nil {
		u := queue[0]
		queue = queue[1:]
		var res *pipeline.Result
		err := r.pacer.do(ctx, u.Hostname(), func() error {
			var err error
			res, err = r.m.pages.Do(ctx, pipeline.Request{URL: u.String(), Options: opts})
			return err
		})
		r.res.PagesRead++
		if err != nil {
			err = failure.FromRemote(err)
			if u == r.start {
				startErr = err
			}
			if failure.CodeOf(err) != failure.RobotsDisallowed {
				failed++
				if firstFailure == "" {
					firstFailure = strings.Join(strings.Fields(err.Error()), " ")
				}
			}
			continue
		}
		page := res.Distilled
		final, err := siteurl.Canonical(page.GetFinalUrl())
		if page.GetStatus() >= 400 {
			r.drop(u)
			if err == nil {
				r.drop(final)
			}
			continue
		}
		// A redirect off the site leads nowhere the map goes. The start
		// page is read for its links even outside the path prefix or
		// the patterns: it is where the walk begins.
		if err != nil || !r.scope.MayVisit(final) && !(u == r.start && r.scope.OnSite(final)) {
			continue
		}
		visited[siteurl.KeyOf(final)] = true
		if !r.add(ctx, final) {
			return startErr
		}
		for _, l := range page.GetLinks().GetItems() {
			lu, err := siteurl.Canonical(l.GetHref())
			if err != nil {
				continue
			}
			if !r.add(ctx, lu) {
				return startErr
			}
			key := siteurl.KeyOf(lu)
			if visited[key] || !r.scope.MayVisit(lu) || !looksLikePage(lu) || !r.allowed(ctx, lu) {
				continue
			}
			visited[key] = true
			queue = append(queue, lu)
		}
	}
	if failed > 0 {
		r.note("%d pages of the crawl could not be read; the first: %s", failed, firstFailure)
	}
	if len(queue) > 0 && r.res.PagesRead >= budget {
		r.note("crawled %d pages, the --map-pages budget; %d links found were not followed", budget, len(queue))
	}
	return startErr
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
