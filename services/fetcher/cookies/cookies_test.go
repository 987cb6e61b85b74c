package cookies

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
)

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// names lists the cookies j sends to raw as name=value, sorted.
func names(t *testing.T, j *Jar, raw string) []string {
	t.Helper()
	var out []string
	for _, c := range j.Cookies(mustURL(t, raw)) {
		out = append(out, c.Name+"="+c.Value)
	}
	slices.Sort(out)
	return out
}

func TestJarDecidesLikeABrowser(t *testing.T) {
	j := New()
	j.SetCookies(mustURL(t, "https://shop.example.com/account/login"), []*http.Cookie{
		{Name: "host", Value: "1"},                                   // host-only, path /account
		{Name: "wide", Value: "2", Domain: "example.com", Path: "/"}, // whole domain
		{Name: "sec", Value: "3", Path: "/", Secure: true},
		{Name: "psl", Value: "4", Domain: "com", Path: "/"}, // a public suffix: refused
	})
	tests := []struct {
		url  string
		want []string
	}{
		{"https://shop.example.com/account/orders", []string{"host=1", "sec=3", "wide=2"}},
		{"https://shop.example.com/", []string{"sec=3", "wide=2"}},
		{"http://shop.example.com/", []string{"wide=2"}},
		{"https://news.example.com/", []string{"wide=2"}},
		{"https://example.org/", nil},
	}
	for _, tt := range tests {
		if got := names(t, j, tt.url); !slices.Equal(got, tt.want) {
			t.Errorf("cookies for %s = %v, want %v", tt.url, got, tt.want)
		}
	}
}

func TestEntriesRebuildTheSameJar(t *testing.T) {
	j := New()
	j.SetCookies(mustURL(t, "https://a.example.com/x/y"), []*http.Cookie{
		{Name: "sid", Value: "one"},
		{Name: "pref", Value: "dark", Domain: "example.com", Path: "/", MaxAge: 3600},
	})
	j.SetCookies(mustURL(t, "https://a.example.com/z/w"), []*http.Cookie{{Name: "sid", Value: "two"}})   // another default path: another cookie
	j.SetCookies(mustURL(t, "https://a.example.com/x/q"), []*http.Cookie{{Name: "sid", Value: "three"}}) // replaces "one"

	// Through the wire and back, as a request to a remote fetcher.
	var wire []*internalv1.JarEntry
	for _, e := range j.Entries() {
		b, err := proto.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var back internalv1.JarEntry
		if err := proto.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		wire = append(wire, &back)
	}
	if len(wire) != 3 {
		t.Fatalf("journal has %d entries, want 3 (a replaced cookie keeps one entry): %v", len(wire), wire)
	}
	rebuilt := FromEntries(wire)
	for _, u := range []string{"https://a.example.com/x/1", "https://a.example.com/z/1", "https://b.example.com/", "https://a.example.com/"} {
		if got, want := names(t, rebuilt, u), names(t, j, u); !slices.Equal(got, want) {
			t.Errorf("rebuilt jar sends %v to %s, the original %v", got, u, want)
		}
	}
	if got := names(t, rebuilt, "https://a.example.com/x/1"); !slices.Equal(got, []string{"pref=dark", "sid=three"}) {
		t.Errorf("cookies = %v", got)
	}
}

func TestDeletionAndExpiry(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	j := newJar(func() time.Time { return now })
	u := mustURL(t, "https://example.com/")
	j.SetCookies(u, []*http.Cookie{{Name: "a", Value: "1"}, {Name: "b", Value: "2", MaxAge: 60}})
	j.SetCookies(u, []*http.Cookie{{Name: "a", MaxAge: -1}})
	if got := names(t, j, "https://example.com/"); !slices.Equal(got, []string{"b=2"}) {
		t.Fatalf("after deleting a: %v", got)
	}
	// Max-Age is made absolute when the cookie arrives.
	for _, e := range j.Entries() {
		if e.GetCookie().GetName() == "b" && e.GetCookie().GetExpires() != now.Unix()+60 {
			t.Fatalf("b expires %d, want %d", e.GetCookie().GetExpires(), now.Unix()+60)
		}
		if e.GetCookie().GetName() == "a" {
			t.Fatal("a deleted cookie is still in the journal")
		}
	}
}

func TestCloneIsIndependent(t *testing.T) {
	j := New()
	j.SetCookies(mustURL(t, "https://example.com/"), []*http.Cookie{{Name: "a", Value: "1"}})
	c := j.Clone()
	c.SetCookies(mustURL(t, "https://example.com/"), []*http.Cookie{{Name: "b", Value: "2"}})
	if got := names(t, j, "https://example.com/"); !slices.Equal(got, []string{"a=1"}) {
		t.Fatalf("the original changed with its clone: %v", got)
	}
	if got := names(t, c, "https://example.com/"); !slices.Equal(got, []string{"a=1", "b=2"}) {
		t.Fatalf("clone = %v", got)
	}
}

func TestJournalIsBounded(t *testing.T) {
	j := New()
	u := mustURL(t, "https://example.com/")
	for i := range MaxEntries + 10 {
		j.SetCookies(u, []*http.Cookie{{Name: "c" + strconv.Itoa(i), Value: "v"}})
	}
	if n := len(j.Entries()); n != MaxEntries {
		t.Fatalf("journal holds %d entries, want %d", n, MaxEntries)
	}
	// After compaction a cookie set again still replaces its entry in
	// place: the index was rebuilt for the shifted journal.
	j.SetCookies(u, []*http.Cookie{{Name: "c500", Value: "again"}})
	entries := j.Entries()
	if len(entries) != MaxEntries {
		t.Fatalf("after setting c500 again the journal holds %d entries, want %d", len(entries), MaxEntries)
	}
	// The ten oldest were dropped; the rest keep their order.
	for i, e := range entries {
		name, value := e.GetCookie().GetName(), e.GetCookie().GetValue()
		if want := "c" + strconv.Itoa(i+10); name != want {
			t.Fatalf("entry %d is %s, want %s", i, name, want)
		}
		wantValue := "v"
		if name == "c500" {
			wantValue = "again"
		}
		if value != wantValue {
			t.Errorf("%s = %q, want %q", name, value, wantValue)
		}
	}
}
