package robots

import (
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
)

// A file crosses FetcherService whole: its groups, rules, delays (one of
// zero included), sitemaps and blanket answers come back as parsed.
func TestProtoRoundTrip(t *testing.T) {
	t.Parallel()
	files := map[string]*Robots{
		"groups": Parse([]byte("User-agent: distill\nUser-agent: other\nDisallow: /private\nAllow: /private/ok$\nCrawl-delay: 2.5\n\n" +
			"User-agent: *\nDisallow: /*.php\nCrawl-delay: 0\n\nSitemap: https://example.com/a.xml\nSitemap: https://example.com/b.xml.gz\n")),
		"empty":    Parse(nil),
		"allow":    AllowAll("robots.txt unavailable (404 Not Found)"),
		"disallow": DisallowAll("robots.txt unreachable (503 Service Unavailable)"),
	}
	for name, want := range files {
		wire, err := proto.Marshal(want.Proto())
		if err != nil {
			t.Fatal(err)
		}
		var m internalv1.RobotsFile
		if err := proto.Unmarshal(wire, &m); err != nil {
			t.Fatal(err)
		}
		if got := FromProto(&m); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: round trip gave %+v, want %+v", name, got, want)
		}
	}
	got := FromProto(files["groups"].Proto()).For("distill")
	if got.CrawlDelay() != 2500*time.Millisecond || got.Check(mustURL(t, "https://example.com/private/x")).Allowed {
		t.Errorf("distill's group: delay %v, /private/x allowed; want 2.5s and disallowed", got.CrawlDelay())
	}
}

// What a peer sends is bounded as Parse bounds a file: delays neither
// negative nor beyond a day, and no more sitemaps than a file may name.
func TestFromProtoBounds(t *testing.T) {
	t.Parallel()
	neg, huge := -3.0, 1e300
	m := &internalv1.RobotsFile{Groups: []*internalv1.RobotsGroup{
		{Agents: []string{"distill"}, CrawlDelaySecs: &neg},
		{Agents: []string{"*"}, CrawlDelaySecs: &huge},
	}}
	for range maxSitemaps + 5 {
		m.Sitemaps = append(m.Sitemaps, "https://example.com/s.xml")
	}
	r := FromProto(m)
	if d := r.For("distill").CrawlDelay(); d != 0 {
		t.Errorf("negative delay read as %v, want 0", d)
	}
	if d := r.For("else").CrawlDelay(); d != maxCrawlDelay {
		t.Errorf("huge delay read as %v, want %v", d, maxCrawlDelay)
	}
	if len(r.Sitemaps()) != maxSitemaps {
		t.Errorf("%d sitemaps kept, want %d", len(r.Sitemaps()), maxSitemaps)
	}
	if FromProto(nil).For("distill").Check(mustURL(t, "https://example.com/")).Allowed {
		t.Error("a missing file allows the site, want it disallowed")
	}
}
