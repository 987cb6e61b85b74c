package netpolicy_test

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"

	"distill.dev/services/platform/netpolicy"
)

func TestResolve(t *testing.T) {
	answers := map[string][]netip.Addr{
		"public.test": {netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("8.8.8.8")},
		"mixed.test":  {netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("10.0.0.1")},
		"local.test":  {netip.MustParseAddr("127.0.0.1")},
		"empty.test":  {},
	}
	var mu sync.Mutex
	queried := map[string]int{}
	dns := startDNS(t, func(name string) []netip.Addr {
		mu.Lock()
		queried[name]++
		mu.Unlock()
		return answers[name]
	})

	tests := []struct {
		name  string
		allow bool // AllowLoopback
		host  string
		want  []string // the addresses returned, when allowed
		// blocked is a substring of the *BlockedError; failed a substring
		// of a plain error.
		blocked, failed string
		// lookup is whether the host goes to DNS at all.
		lookup bool
	}{
		{name: "public name", host: "public.test", want: []string{"93.184.215.14", "8.8.8.8"}, lookup: true},
		{name: "one private address refuses the name", host: "mixed.test", blocked: "mixed.test is 10.0.0.1 (private range", lookup: true},
		{name: "loopback answer refused", host: "local.test", blocked: "local.test is 127.0.0.1 (loopback", lookup: true},
		{name: "loopback answer allowed", allow: true, host: "local.test", want: []string{"127.0.0.1"}, lookup: true},
		{name: "unknown name", host: "nowhere.test", failed: "resolve nowhere.test", lookup: true},
		{name: "empty answer", host: "empty.test", failed: "resolve empty.test", lookup: true},
		{name: "public literal", host: "93.184.215.14", want: []string{"93.184.215.14"}},
		{name: "private literal", host: "10.0.0.1", blocked: "10.0.0.1 (private range"},
		{name: "odd IPv4 spelling refused", host: "2130706433", blocked: "2130706433 is 127.0.0.1 (loopback"},
		{name: "odd IPv4 spelling read as a browser does", allow: true, host: "0x7f.1", want: []string{"127.0.0.1"}},
		{name: "IPv4-mapped literal unmapped", allow: true, host: "::ffff:127.0.0.1", want: []string{"127.0.0.1"}},
		{name: "IPv6 literal", host: "2606:4700:4700::1111", want: []string{"2606:4700:4700::1111"}},
		{name: "localhost refused without a lookup", host: "localhost", blocked: "localhost (loopback name)"},
		{name: "subdomain of localhost refused", host: "a.localhost", blocked: "loopback name"},
		{name: "unreadable host", host: "bad host", blocked: "bad host (invalid URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			clear(queried)
			mu.Unlock()
			addrs, err := netpolicy.Policy{AllowLoopback: tt.allow}.Resolve(t.Context(), dns.Resolver(), tt.host)
			switch {
			case tt.blocked != "":
				be, ok := errors.AsType[*netpolicy.BlockedError](err)
				if !ok {
					t.Fatalf("got %v, %v; want a *BlockedError", addrs, err)
				}
				if be.Host != tt.host {
					t.Errorf("refusal names host %q, want %q", be.Host, tt.host)
				}
				if !strings.Contains(err.Error(), tt.blocked) {
					t.Errorf("refusal %q does not mention %q", err, tt.blocked)
				}
			case tt.failed != "":
				if err == nil || errors.Is(err, netpolicy.ErrBlocked) {
					t.Fatalf("got %v, %v; want a lookup failure", addrs, err)
				}
				if !strings.Contains(err.Error(), tt.failed) {
					t.Errorf("error %q does not mention %q", err, tt.failed)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, a := range addrs {
					got = append(got, a.String())
				}
				slices.Sort(got)
				want := slices.Sorted(slices.Values(tt.want))
				if !slices.Equal(got, want) {
					t.Errorf("addresses %v, want %v", got, want)
				}
			}
			mu.Lock()
			n := queried[strings.ToLower(tt.host)]
			mu.Unlock()
			if looked := n > 0; looked != tt.lookup {
				t.Errorf("looked up in DNS: %v, want %v", looked, tt.lookup)
			}
		})
	}
}

// A nil resolver is the system's.
func TestResolveDefaultResolver(t *testing.T) {
	addrs, err := netpolicy.Policy{AllowLoopback: true}.Resolve(t.Context(), nil, "localhost")
	if err != nil {
		t.Fatal(err)
	}
	if len(addrs) == 0 {
		t.Fatal("no addresses for localhost")
	}
	for _, a := range addrs {
		if !a.IsLoopback() {
			t.Errorf("localhost resolved to %s", a)
		}
	}
}
