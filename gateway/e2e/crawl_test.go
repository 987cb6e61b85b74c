package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"distill.dev/gateway/internal/arrivals"
	"distill.dev/gateway/internal/localcluster"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// slowHub serves a hub linking to n pages, each answered after delay,
// and counts the requests for every path.
func slowHub(t *testing.T, n int, delay time.Duration) (*httptest.Server, func(string) int) {
	t.Helper()
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		switch {
		case r.URL.Path == "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		case r.URL.Path == "/":
			fmt.Fprint(w, "<html><head><title>Hub</title></head><body><main><h1>Hub</h1>")
			for i := range n {
				fmt.Fprintf(w, `<p><a href="/p/%d">Page %d</a></p>`, i, i)
			}
			fmt.Fprint(w, "</main></body></html>")
		default:
			time.Sleep(delay)
			fmt.Fprintf(w, "<html><head><title>%s</title></head><body><main><h1>%s</h1><p>Some words about %s, enough to read as a page.</p></main></body></html>", r.URL.Path, r.URL.Path, r.URL.Path)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func(p string) int {
		mu.Lock()
		defer mu.Unlock()
		return hits[p]
	}
}

// TestCrawlResumesAfterSIGKILL kills a crawl with SIGKILL once it has
// printed ten pages, runs the same command again, and finds every page
// printed, none printed or fetched twice beyond the one in flight when
// the crawl was killed.
func TestCrawlResumesAfterSIGKILL(t *testing.T) {
	t.Parallel()
	const n = 30
	site, hits := slowHub(t, n, 40*time.Millisecond)
	state := filepath.Join(t.TempDir(), "crawl.state")
	args := []string{"crawl", "--allow-local", "--no-cache", "--format", "jsonl", "--delay", "0", "--concurrency", "1",
		"--crawl-state", state, site.URL + "/"}

	cmd := exec.Command(filepath.Join(binDir(t), "distill"), args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var first []string
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for len(first) < 10 && sc.Scan() {
		first = append(first, sc.Text())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// What it printed before it died is still in the pipe.
	for sc.Scan() {
		first = append(first, sc.Text())
	}
	if err := cmd.Wait(); err == nil || cmd.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the crawl was not killed (%v); stderr %q", err, stderr.String())
	}
	if len(first) >= n+1 {
		t.Fatalf("the crawl printed all %d pages before it was killed: nothing to resume", len(first))
	}

	out, errOut, code := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("resumed crawl: exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(errOut, "distill: note: resuming crawl ") {
		t.Errorf("stderr %q does not say the crawl resumed", errOut)
	}
	second := strings.Split(strings.TrimSpace(out), "\n")

	printed := map[string]int{}
	for _, line := range append(first, second...) {
		var l struct {
			URL string `json:"url"`
			OK  bool   `json:"ok"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if !l.OK {
			t.Errorf("%s failed: %s", l.URL, line)
		}
		printed[l.URL]++
	}
	twice := 0
	for i := range n {
		u := fmt.Sprintf("%s/p/%d", site.URL, i)
		switch c := printed[u]; {
		case c == 0:
			t.Errorf("%s was lost", u)
		case c > 1:
			twice++
		}
		if h := hits(fmt.Sprintf("/p/%d", i)); h > 1 {
			twice++
		}
	}
	if printed[site.URL+"/"] != 1 {
		t.Errorf("the hub was printed %d times, want once", printed[site.URL+"/"])
	}
	// One page was in flight (--concurrency 1): it may be fetched twice,
	// and printed twice if the kill came between its line and its record.
	if twice > 2 {
		t.Errorf("%d pages fetched or printed twice, want at most the one in flight", twice)
	}
	t.Logf("killed after %d pages; the resumed run printed %d", len(first), len(second))
}

// crawlSite is a loopback site for cluster crawls: a hub linking to n
// pages, every fifth through an old address that redirects, each page
// answered after delay. It counts the requests for every path and keeps
// the time each request arrived, by the kernel's clock: a handler that
// waits for a core on a loaded machine does not move it.
type crawlSite struct {
	URL  string
	mu   sync.Mutex
	hits map[string]int
	at   []arrival
}

// arrival is a request as the site saw it.
type arrival struct {
	at   time.Time
	path string
}

func newCrawlSite(t *testing.T, n int, delay time.Duration) *crawlSite {
	t.Helper()
	s := &crawlSite{hits: map[string]int{}}
	lis, err := arrivals.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.URL = "http://" + lis.Addr().String()
	srv := arrivals.Server(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := arrivals.Of(r)
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.at = append(s.at, arrival{now, r.URL.Path})
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		switch {
		case r.URL.Path == "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		case r.URL.Path == "/":
			fmt.Fprint(w, "<html><head><title>Hub</title></head><body><main><h1>Hub</h1>")
			for i := range n {
				if i%5 == 4 {
					fmt.Fprintf(w, `<p><a href="/moved/%d">Page %d</a></p>`, i, i)
					continue
				}
				fmt.Fprintf(w, `<p><a href="/p/%d">Page %d</a></p>`, i, i)
			}
			fmt.Fprint(w, "</main></body></html>")
		case strings.HasPrefix(r.URL.Path, "/moved/"):
			http.Redirect(w, r, "/p/"+strings.TrimPrefix(r.URL.Path, "/moved/"), http.StatusMovedPermanently)
		default:
			time.Sleep(delay)
			fmt.Fprintf(w, "<html><head><title>%s</title></head><body><main><h1>%s</h1><p>Some words about %s, enough to read as a page.</p></main></body></html>", r.URL.Path, r.URL.Path, r.URL.Path)
		}
	}))
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

func (s *crawlSite) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// closest is the shortest time between two requests the site saw, and
// the paths of those two.
func (s *crawlSite) closest() (time.Duration, string, int) {
	s.mu.Lock()
	at := slices.Clone(s.at)
	s.mu.Unlock()
	slices.SortFunc(at, func(a, b arrival) int { return a.at.Compare(b.at) })
	closest, pair := time.Duration(1<<63-1), ""
	for i := 1; i < len(at); i++ {
		if d := at[i].at.Sub(at[i-1].at); d < closest {
			closest, pair = d, at[i-1].path+" then "+at[i].path
		}
	}
	return closest, pair, len(at)
}

// pageURL is the URL the crawl names page i by: a redirected page keeps
// the address it was found at.
func (s *crawlSite) pageURL(i int) string {
	if i%5 == 4 {
		return fmt.Sprintf("%s/moved/%d", s.URL, i)
	}
	return fmt.Sprintf("%s/p/%d", s.URL, i)
}

// recvCrawl reads a crawl's stream until it ends, or until upTo pages
// (0: no bound), counting each page by URL; it returns the job id and
// the last summary.
func recvCrawl(t *testing.T, stream distillv1.DistillService_CrawlClient, upTo int, printed map[string]int) (string, *distillv1.CrawlStatusResponse, error) {
	var id string
	var last *distillv1.CrawlStatusResponse
	for got := 0; upTo == 0 || got < upTo; {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return id, last, nil
		}
		if err != nil {
			return id, last, err
		}
		id = r.GetJobId()
		if p := r.GetPage(); p != nil {
			if p.GetError() != nil {
				t.Errorf("%s failed: %v", p.GetUrl(), p.GetError())
			}
			printed[p.GetUrl()]++
			got++
		}
		if s := r.GetSummary(); s != nil {
			last = s
		}
	}
	return id, last, nil
}

// fetchedBy counts the pages of the site a fetcher process read, by its
// log (the fetchers log every fetch at debug).
func fetchedBy(p *localcluster.Proc, site string) int {
	n := 0
	for line := range strings.SplitSeq(p.Log.String(), "\n") {
		if strings.Contains(line, `"msg":"fetched"`) && strings.Contains(line, site+"/p/") {
			n++
		}
	}
	return n
}

// leaseEnv makes a dead gateway's crawls adoptable two seconds after it
// died, rather than fifteen.
var leaseEnv = []string{"DISTILL_CRAWL_LEASE=2s"}

// TestClusterCrawlAdoptedWhenItsGatewayDies: a gateway killed with
// SIGKILL mid-crawl leaves the crawl's journal, its pages' answers and
// its output in JetStream; once its lease runs out another gateway adopts
// the crawl by itself and finishes it, its pages read by both fetchers.
// The client, back through the other gateway with the job id, gets every
// page; none is fetched twice beyond those in flight, nor delivered twice
// beyond those sent as the gateway died.
func TestClusterCrawlAdoptedWhenItsGatewayDies(t *testing.T) {
	t.Parallel()
	c := startCluster(t, clusterOpts{Gateways: 2, Fetchers: 2, NoRenderer: true, Env: leaseEnv})
	const n = 30
	site := newCrawlSite(t, n, 60*time.Millisecond)
	req := &distillv1.CrawlRequest{
		Url: site.URL + "/", DelayMs: proto.Int64(0), Concurrency: proto.Int32(4), MaxPages: proto.Int32(n + 1),
		Options: &distillv1.FetchOptions{AllowLocal: true, NoCache: true, Js: distillv1.JsMode_JS_MODE_OFF, Format: distillv1.Format_FORMAT_TEXT},
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	printed := map[string]int{}
	stream, err := c.client(0).Crawl(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := recvCrawl(t, stream, 8, printed)
	if err != nil || id == "" {
		t.Fatalf("first gateway: job %q, %v", id, err)
	}
	c.signal(c.Gateways[0], syscall.SIGKILL)
	// Whatever it sent before it died is still read.
	_, _, _ = recvCrawl(t, stream, 0, printed)
	first := len(printed)

	// Nobody asks: the other gateway adopts the crawl once the lease runs
	// out, and finishes it.
	var st *distillv1.CrawlStatusResponse
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		st, err = c.client(1).CrawlStatus(ctx, &distillv1.CrawlStatusRequest{JobId: id})
		if err != nil {
			t.Fatalf("status from the other gateway: %v", err)
		}
		if st.GetState() != distillv1.CrawlState_CRAWL_STATE_RUNNING || time.Now().After(deadline) {
			break
		}
	}
	if st.GetState() != distillv1.CrawlState_CRAWL_STATE_DONE || st.GetPagesDone() != n+1 {
		t.Fatalf("status once adopted: %v; want done with %d pages", st, n+1)
	}

	resumed := proto.CloneOf(req)
	resumed.JobId = id
	stream, err = c.client(1).Crawl(ctx, resumed)
	if err != nil {
		t.Fatal(err)
	}
	gotID, last, err := recvCrawl(t, stream, 0, printed)
	if err != nil {
		t.Fatalf("second gateway: %v", err)
	}
	if gotID != id || last.GetState() != distillv1.CrawlState_CRAWL_STATE_DONE {
		t.Errorf("resumed as job %q, summary %v; want job %q done", gotID, last, id)
	}
	fetchedTwice, printedTwice := 0, 0
	for i := range n {
		u := site.pageURL(i)
		if printed[u] == 0 {
			t.Errorf("%s was lost", u)
		}
		if printed[u] > 1 {
			printedTwice++
		}
		if site.count(fmt.Sprintf("/p/%d", i)) > 1 {
			fetchedTwice++
		}
	}
	// The pages in flight when the gateway died were in the fetchers'
	// hands: their answers were kept, so none is read again. Those sent
	// to the client as it died may be sent again.
	if fetchedTwice > 0 {
		t.Errorf("%d pages fetched twice, want none", fetchedTwice)
	}
	if printedTwice > 4 {
		t.Errorf("%d pages delivered twice, want at most the 4 in flight", printedTwice)
	}
	a, b := fetchedBy(c.Fetchers[0], site.URL), fetchedBy(c.Fetchers[1], site.URL)
	if a == 0 || b == 0 {
		t.Errorf("the fetchers read %d and %d pages: both should have taken some", a, b)
	}
	t.Logf("the first gateway delivered %d pages before it was killed; %d in all; fetchers read %d and %d", first, len(printed), a, b)

	// A job id no gateway has is refused.
	stream, err = c.client(1).Crawl(ctx, &distillv1.CrawlRequest{Url: site.URL + "/", JobId: "0123456789abcdef", Options: req.Options})
	if err == nil {
		_, err = stream.Recv()
	}
	if status.Code(err) != codes.NotFound {
		t.Errorf("resuming an unknown job: %v, want NotFound", err)
	}
}

// TestClusterCrawlSurvivesAFetcherKilled: one of two fetchers is killed
// with SIGKILL mid-crawl and stays dead; the pages it held go back to the
// work queue once their ack wait runs out, the other fetcher reads them,
// and every page reaches the client.
func TestClusterCrawlSurvivesAFetcherKilled(t *testing.T) {
	t.Parallel()
	c := startCluster(t, clusterOpts{Fetchers: 2, NoRenderer: true, AckWait: 2 * time.Second})
	const n = 24
	site := newCrawlSite(t, n, 80*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stream, err := c.client(0).Crawl(ctx, &distillv1.CrawlRequest{
		Url: site.URL + "/", DelayMs: proto.Int64(0), Concurrency: proto.Int32(4), MaxPages: proto.Int32(n + 1),
		Options: &distillv1.FetchOptions{AllowLocal: true, NoCache: true, Js: distillv1.JsMode_JS_MODE_OFF},
	})
	if err != nil {
		t.Fatal(err)
	}
	printed := map[string]int{}
	if _, _, err := recvCrawl(t, stream, 6, printed); err != nil {
		t.Fatal(err)
	}
	c.signal(c.Fetchers[1], syscall.SIGKILL)
	_, last, err := recvCrawl(t, stream, 0, printed)
	if err != nil {
		t.Fatal(err)
	}
	if last.GetState() != distillv1.CrawlState_CRAWL_STATE_DONE || len(printed) != n+1 {
		t.Errorf("%d pages, summary %v; want all %d done", len(printed), last, n+1)
	}
	twice := 0
	for i := range n {
		if printed[site.pageURL(i)] != 1 {
			t.Errorf("%s delivered %d times", site.pageURL(i), printed[site.pageURL(i)])
		}
		if site.count(fmt.Sprintf("/p/%d", i)) > 1 {
			twice++
		}
	}
	if twice > 4 {
		t.Errorf("%d pages fetched twice, want at most the 4 in flight", twice)
	}
}

// TestClusterCrawlStatusAndCancelFromAnyGateway: a crawl streamed
// through one gateway is reported and canceled through another.
func TestClusterCrawlStatusAndCancelFromAnyGateway(t *testing.T) {
	t.Parallel()
	c := startCluster(t, clusterOpts{Gateways: 2, NoRenderer: true})
	const n = 40
	site := newCrawlSite(t, n, 100*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stream, err := c.client(0).Crawl(ctx, &distillv1.CrawlRequest{
		Url: site.URL + "/", DelayMs: proto.Int64(0), Concurrency: proto.Int32(1), MaxPages: proto.Int32(n + 1),
		Options: &distillv1.FetchOptions{AllowLocal: true, NoCache: true, Js: distillv1.JsMode_JS_MODE_OFF},
	})
	if err != nil {
		t.Fatal(err)
	}
	printed := map[string]int{}
	id, _, err := recvCrawl(t, stream, 3, printed)
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.client(1).CrawlStatus(ctx, &distillv1.CrawlStatusRequest{JobId: id})
	if err != nil || st.GetJobId() != id || st.GetState() != distillv1.CrawlState_CRAWL_STATE_RUNNING {
		t.Fatalf("status through the other gateway: %v, %v; want job %s running", st, err, id)
	}
	if _, err := c.client(1).CrawlCancel(ctx, &distillv1.CrawlCancelRequest{JobId: id}); err != nil {
		t.Fatalf("cancel through the other gateway: %v", err)
	}
	_, last, err := recvCrawl(t, stream, 0, printed)
	if err != nil {
		t.Fatal(err)
	}
	if last.GetState() != distillv1.CrawlState_CRAWL_STATE_CANCELED || len(printed) > n/2 {
		t.Errorf("after the cancel: %d pages, summary %v; want it canceled well before the end", len(printed), last)
	}
	st, err = c.client(1).CrawlStatus(ctx, &distillv1.CrawlStatusRequest{JobId: id})
	if err != nil || st.GetState() != distillv1.CrawlState_CRAWL_STATE_CANCELED {
		t.Errorf("status once canceled: %v, %v", st, err)
	}
	if _, err := c.client(1).CrawlStatus(ctx, &distillv1.CrawlStatusRequest{JobId: "0123456789abcdef"}); status.Code(err) != codes.NotFound {
		t.Errorf("status of an unknown job: %v, want NotFound", err)
	}
}

// TestClusterCrawlPolitenessAcrossFetchers: two fetcher processes read a
// crawl's pages, slow ones and redirects among them, at four at a time;
// the site never sees two requests closer than --delay. The slack is the
// site's own: it notes a request when its handler runs, which on a
// machine running the whole suite can be tens of milliseconds after the
// bytes arrived (robots.txt, the first request on a new connection, was
// once noted 22 ms late). Four requests at once with no pacing would come
// all but together.
func TestClusterCrawlPolitenessAcrossFetchers(t *testing.T) {
	t.Parallel()
	c := startCluster(t, clusterOpts{Fetchers: 2, NoRenderer: true})
	const n = 20
	const delay = 150 * time.Millisecond
	site := newCrawlSite(t, n, 200*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stream, err := c.client(0).Crawl(ctx, &distillv1.CrawlRequest{
		Url: site.URL + "/", DelayMs: proto.Int64(delay.Milliseconds()), Concurrency: proto.Int32(4), MaxPages: proto.Int32(n + 1),
		Options: &distillv1.FetchOptions{AllowLocal: true, NoCache: true, Js: distillv1.JsMode_JS_MODE_OFF},
	})
	if err != nil {
		t.Fatal(err)
	}
	printed := map[string]int{}
	_, last, err := recvCrawl(t, stream, 0, printed)
	if err != nil {
		t.Fatal(err)
	}
	if last.GetState() != distillv1.CrawlState_CRAWL_STATE_DONE || len(printed) != n+1 {
		t.Fatalf("%d pages, summary %v; want all %d done", len(printed), last, n+1)
	}
	closest, pair, requests := site.closest()
	const slack = 30 * time.Millisecond
	if closest < delay-slack {
		t.Errorf("two of the %d requests (%s) came %v apart; --delay is %v", requests, pair, closest, delay)
	}
	a, b := fetchedBy(c.Fetchers[0], site.URL), fetchedBy(c.Fetchers[1], site.URL)
	if a == 0 || b == 0 {
		t.Errorf("the fetchers read %d and %d pages: both should have taken some", a, b)
	}
	t.Logf("%d requests, the closest two %v apart (--delay %v); fetchers read %d and %d pages", requests, closest, delay, a, b)
}
