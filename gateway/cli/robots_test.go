package cli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestFetchRespectRobots(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "User-agent: *\nDisallow: /article\n")
	})
	mux.HandleFunc("/article", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, articleHTML)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	// Asked to respect robots.txt first, so that no earlier answer can be
	// served from a cache instead.
	out, errOut, code := run(t, "fetch", "--allow-local", "--respect-robots", srv.URL+"/article")
	if code != ExitFailure || out != "" {
		t.Fatalf("exit %d, stdout %q; want %d and nothing", code, out, ExitFailure)
	}
	if !strings.Contains(errOut, srv.URL+"/article") || !strings.Contains(errOut, "Disallow: /article") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("stderr = %q, want one line naming the URL and the rule", errOut)
	}

	if _, errOut, code := run(t, "fetch", "--allow-local", srv.URL+"/article"); code != 0 {
		t.Fatalf("without --respect-robots: exit %d, stderr %q", code, errOut)
	}
}
