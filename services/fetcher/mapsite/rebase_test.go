package mapsite

import (
	"errors"
	"strings"
	"testing"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/pipeline"
	"distill.dev/services/fetcher/siteurl"
)

func TestRebase(t *testing.T) {
	tests := []struct {
		name, start, final string
		status             int32
		err                error
		host               string // the map's host afterwards
		note               string
	}{
		{"to www", "https://example.com/", "https://www.example.com/", 200, nil, "www.example.com", "mapped www.example.com"},
		{"from www, and to https", "http://www.example.com/", "https://example.com/home", 200, nil, "example.com", "mapped example.com"},
		{"same host", "https://example.com/", "https://example.com/en/", 200, nil, "example.com", ""},
		{"another site", "https://example.com/", "https://login.example.net/?next=/", 200, nil, "example.com", "another site"},
		{"a subdomain is another site", "https://example.com/", "https://shop.example.com/", 200, nil, "example.com", "another site"},
		{"error status", "https://example.com/", "https://www.example.com/", 404, nil, "example.com", ""},
		{"failed", "https://example.com/", "", 0, errors.New("refused"), "example.com", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := mustCanonical(t, tt.start)
			scope, err := siteurl.NewScope(tt.start, siteurl.ScopeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			r := &run{start: start, scope: scope, res: &Result{}}
			p := page{url: start, err: tt.err}
			if tt.err == nil {
				p.res = &pipeline.Result{Distilled: &distillv1.Distilled{FinalUrl: tt.final, Status: tt.status}}
			}
			moved := r.rebase(p)
			if r.start.Host != tt.host || moved != (tt.host != start.Host) {
				t.Errorf("host %s (moved %v), want %s", r.start.Host, moved, tt.host)
			}
			if moved && !r.scope.OnSite(mustCanonical(t, "https://"+tt.host+"/x")) {
				t.Errorf("the scope did not move with the start")
			}
			notes := strings.Join(r.res.Notes, "\n")
			if tt.note == "" && notes != "" || !strings.Contains(notes, tt.note) {
				t.Errorf("notes %q, want %q", notes, tt.note)
			}
		})
	}
}
