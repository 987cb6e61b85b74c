package cli

import (
	"fmt"
	"strings"
	"testing"
)

// docsSite generates a documentation site of 187 pages, three links deep:
// six sections, six topics each, four pages under each topic. One page,
// the last the site links to, answers how to change the retry timeout;
// the words leading to it (in link text, paths and the paragraphs around
// links) are spread as real docs spread them, and filler pages share the
// common words ("change", "configure", "set") that decide nothing.
func docsSite(t *testing.T) (*mapSite, string) {
	t.Helper()
	sections := []struct{ name, blurb string }{
		{"Getting started", "Install the tool, set up a project and change its first settings."},
		{"Tutorials", "Step by step: build a site, deploy it and change its theme."},
		{"Reference", "Every command, flag and environment variable you can set."},
		{"Community", "Forums, meetups and how to change the docs."},
		{"Operations", "Monitoring, backups, scaling and upgrades you can configure."},
		{"Guides", "Networking, retries and timeouts, storage and security in depth."},
	}
	topics := []string{"Overview", "Storage", "Security", "Logging", "Plugins", "Networking"}
	topicBlurb := map[string]string{
		"Networking": "Connections, proxies, retry policies and their timeouts.",
	}
	page := func(title, intro string, links [][2]string) mapFile {
		var b strings.Builder
		fmt.Fprintf(&b, "<html><head><title>%s</title></head><body><nav><a href=\"/\">Home</a></nav><main><h1>%s</h1><p>%s</p>", title, title, intro)
		for _, l := range links {
			fmt.Fprintf(&b, "<p><a href=\"%s\">%s</a>: %s</p>", l[0], l[1], blurbOf(l[1], topicBlurb))
		}
		b.WriteString("<p>You can change most settings in the configuration file and set others on the command line.</p></main></body></html>")
		return mapFile{"text/html; charset=utf-8", b.String()}
	}
	files := map[string]mapFile{"/robots.txt": {"text/plain", "User-agent: *\nAllow: /\n"}}
	var home [][2]string
	answer := ""
	for si, s := range sections {
		sp := "/" + slug(s.name)
		home = append(home, [2]string{sp, s.name})
		topicBlurb[s.name] = s.blurb
		var tl [][2]string
		for ti, tn := range topics {
			tp := sp + "/" + slug(tn)
			tl = append(tl, [2]string{tp, tn})
			var pl [][2]string
			for pi := range 4 {
				name := fmt.Sprintf("%s notes %d", tn, pi+1)
				pp := fmt.Sprintf("%s/notes-%d", tp, pi+1)
				intro := fmt.Sprintf("Notes on %s in %s: what to configure and when to change it.", strings.ToLower(tn), strings.ToLower(s.name))
				if si == len(sections)-1 && ti == len(topics)-1 && pi == 3 {
					name, pp = "Retry timeouts", tp+"/retry-timeouts"
					intro = "To change the retry timeout, set retry.timeout in the configuration file. The retry timeout bounds each retry; " +
						"after the last retry the request fails. Change the retry timeout per host with hosts.NAME.retry.timeout."
					answer = pp
				}
				pl = append(pl, [2]string{pp, name})
				files[pp] = page(name, intro, nil)
			}
			files[tp] = page(tn+" in "+s.name, "The pages on "+strings.ToLower(tn)+".", pl)
		}
		files[sp] = page(s.name, s.blurb, tl)
	}
	files["/"] = page("Docs", "Welcome to the documentation.", home)
	return newMapSite(t, files), answer
}

func blurbOf(name string, blurbs map[string]string) string {
	if b, ok := blurbs[name]; ok {
		return b
	}
	return "More about " + strings.ToLower(name) + "."
}

func slug(s string) string { return strings.ReplaceAll(strings.ToLower(s), " ", "-") }

// pagesUntil is how many pages a crawl printed up to and including the
// one at path, or -1.
func pagesUntil(lines []crawlLine, url string) int {
	for i, l := range lines {
		if l.URL == url {
			return i + 1
		}
	}
	return -1
}

// TestCrawlQueryFindsTheDeepAnswerFirst measures what --query buys: on
// the generated docs site, breadth first reads nearly the whole site
// before the answer; best first goes down the sections, topics and pages
// whose words, paths and paragraphs hold the question's rare words.
func TestCrawlQueryFindsTheDeepAnswerFirst(t *testing.T) {
	s, answer := docsSite(t)
	base := []string{"crawl", "--allow-local", "--no-cache", "--format", "jsonl", "--delay", "0", "--concurrency", "1",
		"--depth", "3", "--max-pages", "0", "--profile", "full"}
	const query = "how do I change the retry timeout"

	out, errOut, code := run(t, append(base, s.URL+"/")...)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	all := crawlLines(t, out)
	bfs := pagesUntil(all, s.URL+answer)

	out, errOut, code = run(t, append(base, "--query", query, s.URL+"/")...)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	ranked := crawlLines(t, out)
	best := pagesUntil(ranked, s.URL+answer)
	t.Logf("pages read to reach the answer, of %d: breadth first %d, with --query %d", len(all), bfs, best)
	if len(all) != 187 || bfs < 150 {
		t.Fatalf("breadth first read %d pages and reached the answer at %d: the site is not what the test means", len(all), bfs)
	}
	// Four pages is the least any crawl can read to reach a page three
	// links deep.
	if best != 4 {
		t.Errorf("with --query the answer came at page %d, want 4: straight down to it", best)
	}
	rel := ranked[best-1].Result.Relevance
	if rel == nil || *rel < 0.8 {
		t.Errorf("the answer's relevance is %v, want >= 0.8", rel)
	}
	for _, l := range ranked {
		if r := l.Result.Relevance; r == nil || *r < 0 || *r > 1 {
			t.Fatalf("%s: relevance %v, want 0..1", l.URL, r)
		}
	}

	out, errOut, code = run(t, append(base, "--query", query, "--stop-when-answered", s.URL+"/")...)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	stopped := crawlLines(t, out)
	if got := pagesUntil(stopped, s.URL+answer); got != best || len(stopped) != best+8 {
		t.Errorf("--stop-when-answered read %d pages (the answer at %d), want the answer at %d and 8 more", len(stopped), got, best)
	}
	if !strings.Contains(errOut, "a page answered the query") {
		t.Errorf("stderr %q does not say why the crawl stopped", errOut)
	}
}
