package fetch

import (
	"context"
	"net/http"
	"net/url"

	"distill.dev/proto/failure"
	"distill.dev/services/fetcher/pace"
	"distill.dev/services/fetcher/robots"
)

// productToken is the name robots.txt groups address us by.
const productToken = "distill"

// robotsCaches keeps one cache per policy, as the Fetcher keeps one client:
// rules read through a loopback redirect must not decide for a call that
// may not reach loopback, nor a refusal under the strict policy for a call
// that may. The caches are shared by the profiles: robots.txt is read
// through the asking call's profile (a site that fingerprints sees one
// client, not two), but the rules kept are distill's group of the site's
// file whoever read it, so another identity's call may use them.
type robotsCaches struct{ strict, allowLoopback *robots.Cache }

func newRobotsCaches() robotsCaches {
	return robotsCaches{strict: robots.NewCache(), allowLoopback: robots.NewCache()}
}

func (r robotsCaches) of(c *call) *robots.Cache {
	if c.policy.AllowLoopback {
		return r.allowLoopback
	}
	return r.strict
}

// checkRobots refuses a hop its site's robots.txt disallows, when the call
// asked to respect robots.txt. It also sets the call's rate for the hop:
// the site's Crawl-delay, when slower than the rate the caller asked for.
func (f *Fetcher) checkRobots(ctx context.Context, c *call, u *url.URL, where string) error {
	if !c.opts.GetRespectRobots() {
		return nil
	}
	// The robots.txt request is paced at the caller's own rate: the
	// previous hop's Crawl-delay was another host's.
	c.rate = c.opts.GetRateLimit()
	var file *robots.Robots
	var err error
	shared := false
	if c.robotsFrom != nil {
		file, shared, err = c.robotsFrom(ctx, u)
	}
	if !shared {
		file, err = f.robots.of(c).Get(ctx, u, f.robotsGetter(c))
	}
	if err != nil {
		return c.classify(ctx, where+": robots.txt", err)
	}
	rules := file.For(productToken)
	v := rules.Check(u)
	switch {
	case v.Allowed:
	case v.Rule != nil:
		return failure.New(failure.RobotsDisallowed, "%s: disallowed by %s (%s)", where, robots.URL(u), v.Rule)
	default:
		return failure.New(failure.RobotsDisallowed, "%s: disallowed: %s", where, v.Reason)
	}
	if d := rules.CrawlDelay(); d > 0 {
		if perSec := pace.PerSecond(d); c.rate == 0 || perSec < c.rate {
			c.rate = perSec
		}
	}
	return nil
}

// robotsGetter fetches robots.txt as the page is fetched: the call's
// policy judges every hop, its client dials, and the request counts
// against the host's concurrency and rate limits like any other.
func (f *Fetcher) robotsGetter(c *call) robots.Getter {
	return func(ctx context.Context, raw string) (*http.Response, error) {
		u, err := c.policy.CheckURL(raw)
		if err != nil {
			return nil, err
		}
		resp, err := f.sendOnce(ctx, c, u, robotsGet)
		if err != nil {
			return nil, err
		}
		body, err := decodedBody(resp)
		if err != nil {
			_ = resp.Body.Close()
			return nil, err
		}
		resp.Body = body
		return resp, nil
	}
}
