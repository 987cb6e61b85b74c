package robots

import (
	"math"
	"time"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
)

// Proto is r as FetcherService's Robots carries it, so that a process
// without the fetcher (a cluster's gateway) obeys the file the fetcher
// read.
func (r *Robots) Proto() *internalv1.RobotsFile {
	m := &internalv1.RobotsFile{Sitemaps: r.sitemaps}
	if r.blanket != nil {
		m.Blanket = &internalv1.RobotsBlanket{Allowed: r.blanket.Allowed, Reason: r.blanket.Reason}
	}
	for _, g := range r.groups {
		pg := &internalv1.RobotsGroup{Agents: g.agents}
		for _, rule := range g.rules {
			pg.Rules = append(pg.Rules, &internalv1.RobotsRule{Allow: rule.Allow, Pattern: rule.Pattern})
		}
		if g.hasDelay {
			secs := g.crawlDelay.Seconds()
			pg.CrawlDelaySecs = &secs
		}
		m.Groups = append(m.Groups, pg)
	}
	return m
}

// FromProto rebuilds a file from its Proto. A nil file is one that could
// not be read, as a fetcher that answered without one leaves it: the
// whole site is disallowed, as RFC 9309 section 2.3.1.4 asks of a file
// that could not be reached.
func FromProto(m *internalv1.RobotsFile) *Robots {
	sitemaps := m.GetSitemaps()
	if len(sitemaps) > maxSitemaps {
		sitemaps = sitemaps[:maxSitemaps]
	}
	if m == nil {
		return DisallowAll("robots.txt: the fetcher answered without a file")
	}
	if b := m.GetBlanket(); b != nil {
		return &Robots{blanket: &Verdict{Allowed: b.GetAllowed(), Reason: b.GetReason()}, sitemaps: sitemaps}
	}
	r := &Robots{sitemaps: sitemaps}
	for _, pg := range m.GetGroups() {
		g := group{agents: pg.GetAgents()}
		for _, rule := range pg.GetRules() {
			g.rules = append(g.rules, Rule{Allow: rule.GetAllow(), Pattern: rule.GetPattern()})
		}
		if pg.CrawlDelaySecs != nil {
			g.crawlDelay, g.hasDelay = delayOf(pg.GetCrawlDelaySecs()), true
		}
		r.groups = append(r.groups, g)
	}
	return r
}

// delayOf bounds a delay in seconds as Parse does, so a peer's value
// cannot overflow or go negative.
func delayOf(secs float64) time.Duration {
	switch {
	case math.IsNaN(secs) || secs <= 0:
		return 0
	case secs >= maxCrawlDelay.Seconds():
		return maxCrawlDelay
	}
	return time.Duration(secs * float64(time.Second))
}
