package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"time"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/fetch"
	"distill.dev/services/fetcher/identity"
)

// getter fetches one URL and reads its body.
type getter func(ctx context.Context, url string) error

// profileResult is one client's figures.
type profileResult struct {
	name          string
	pagesPerSec   float64
	bytesPerPage  float64
	allocsPerPage float64
}

// RunProfiles fetches one page over loopback TLS (HTTP/2) cfg.Count times,
// cfg.Concurrency at once, with net/http's client and with the fetcher
// under each browser profile, and prints pages/s and what each page
// allocated, against net/http.
func RunProfiles(ctx context.Context, cfg Config, logger *slog.Logger, w io.Writer) error {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, profilePage)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())

	clients := []struct {
		name string
		get  getter
	}{{"net/http", netHTTPGetter(roots)}}
	for _, name := range identity.Names() {
		p, err := identity.Named(name)
		if err != nil {
			return err
		}
		f := fetch.New(logger, fetch.WithProfile(p), fetch.WithRootCAs(roots), fetch.WithAllowLocal(true))
		defer f.Close()
		clients = append(clients, struct {
			name string
			get  getter
		}{"fetcher, " + name + " profile", fetcherGetter(f)})
	}
	fmt.Fprintf(w, "browser profiles: %d pages over loopback TLS (HTTP/2), %d at once, best of %d rounds\n", cfg.Count, cfg.Concurrency, cfg.Rounds)
	fmt.Fprintf(w, "%-26s %10s %10s %12s %10s\n", "client", "pages/s", "x net/http", "bytes/page", "allocs/page")
	var base float64
	for _, c := range clients {
		r, err := measureClient(ctx, c.name, c.get, srv.URL+"/", cfg)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		if base == 0 {
			base = r.pagesPerSec
		}
		fmt.Fprintf(w, "%-26s %10.0f %10.2f %12.0f %10.0f\n", r.name, r.pagesPerSec, r.pagesPerSec/base, r.bytesPerPage, r.allocsPerPage)
	}
	return nil
}

const profilePage = "<!doctype html><html><head><title>Bench</title></head><body><main><h1>Bench</h1><p>A page of a few words, served over TLS.</p></main></body></html>"

func netHTTPGetter(roots *x509.CertPool) getter {
	tr := &http.Transport{ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 64, TLSClientConfig: &tls.Config{RootCAs: roots}}
	client := &http.Client{Transport: tr}
	return func(ctx context.Context, url string) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
}

func fetcherGetter(f *fetch.Fetcher) getter {
	return func(ctx context.Context, url string) error {
		_, err := f.Fetch(ctx, &internalv1.FetcherServiceFetchRequest{Url: url, Options: &distillv1.FetchOptions{AllowLocal: true}})
		return err
	}
}

// measureClient runs a warm-up round, then cfg.Rounds, and keeps the
// fastest, with the allocations of all measured rounds per page.
func measureClient(ctx context.Context, name string, get getter, url string, cfg Config) (profileResult, error) {
	if err := fetchAll(ctx, get, url, cfg.Count, cfg.Concurrency); err != nil {
		return profileResult{}, err
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	best := time.Duration(0)
	for range max(cfg.Rounds, 1) {
		start := time.Now()
		if err := fetchAll(ctx, get, url, cfg.Count, cfg.Concurrency); err != nil {
			return profileResult{}, err
		}
		if d := time.Since(start); best == 0 || d < best {
			best = d
		}
	}
	runtime.ReadMemStats(&after)
	pages := float64(cfg.Count * max(cfg.Rounds, 1))
	return profileResult{
		name:          name,
		pagesPerSec:   float64(cfg.Count) / best.Seconds(),
		bytesPerPage:  float64(after.TotalAlloc-before.TotalAlloc) / pages,
		allocsPerPage: float64(after.Mallocs-before.Mallocs) / pages,
	}, nil
}

// fetchAll gets url n times, at most concurrency at once; the first error
// ends it.
func fetchAll(ctx context.Context, get getter, url string, n, concurrency int) error {
	work := make(chan struct{}, n)
	for range n {
		work <- struct{}{}
	}
	close(work)
	var wg sync.WaitGroup
	errs := make(chan error, concurrency)
	for range max(concurrency, 1) {
		wg.Go(func() {
			for range work {
				if err := get(ctx, url); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}
