package host

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// fakeDNS answers A queries on loopback from names, and NXDOMAIN for
// everything else: a resolver the tests own, so that verify_dns is judged
// without the machine's DNS.
func fakeDNS(t *testing.T, names map[string]string) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var p dnsmessage.Parser
			h, err := p.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := p.Question()
			if err != nil {
				continue
			}
			b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RCode: dnsmessage.RCodeNameError})
			b.EnableCompression()
			addr, ok := names[strings.TrimSuffix(q.Name.String(), ".")]
			if ok {
				b = dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true})
			}
			_ = b.StartQuestions()
			_ = b.Question(q)
			if ok && q.Type == dnsmessage.TypeA {
				_ = b.StartAnswers()
				_ = b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60},
					dnsmessage.AResource{A: netip.MustParseAddr(addr).As4()})
			}
			msg, err := b.Finish()
			if err == nil {
				_, _ = pc.WriteTo(msg, from)
			}
		}
	}()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
}

// The URL a model asks for is judged before any budget is spent: the
// actor's hosts (wildcards never the bare domain), schemes and ports, and,
// with verify_dns, every address the host resolves to.
func TestPreflight(t *testing.T) {
	resolver := fakeDNS(t, map[string]string{
		"docs.example.com": "93.184.216.34", "inside.example.com": "10.0.0.7",
		"a.example.org": "93.184.216.35", "example.org": "93.184.216.36",
	})
	p, err := Parse([]byte(`
actors:
  strict:
    allowed_hosts: [docs.example.com, inside.example.com, gone.example.com, "*.example.org"]
  loose:
    allowed_hosts: [inside.example.com, gone.example.com]
    allowed_schemes: [https]
    allowed_ports: [8443]
    verify_dns: false
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(slog.New(slog.NewTextHandler(io.Discard, nil)), Fixed(p), nil, nil, EngineConfig{Resolver: resolver})
	tests := []struct {
		actor, url string
		want       Code // "" passes
	}{
		{"strict", "https://docs.example.com/a", ""},
		{"strict", "http://docs.example.com/a", ""},
		{"strict", "https://docs.example.com:8443/a", NotAuthorized},
		{"strict", "https://a.example.org/", ""},
		{"strict", "https://example.org/", NotAuthorized}, // the bare domain of a wildcard
		{"strict", "https://evil.test/", NotAuthorized},
		{"strict", "https://inside.example.com/", NotAuthorized}, // resolves to a private address
		{"strict", "https://gone.example.com/", NotAuthorized},   // does not resolve
		{"strict", "ftp://docs.example.com/", InvalidInput},
		{"strict", "http://10.0.0.7/", NotAuthorized},
		{"loose", "https://inside.example.com:8443/", ""}, // not resolved: the fetcher judges it at connect
		{"loose", "https://gone.example.com:8443/", ""},
		{"loose", "https://inside.example.com/", NotAuthorized},
		{"loose", "http://inside.example.com:8443/", NotAuthorized},
	}
	for _, tt := range tests {
		t.Run(tt.actor+" "+tt.url, func(t *testing.T) {
			a, _ := p.Actor(tt.actor)
			err := e.preflight(t.Context(), a, tt.url)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantCode(t, err, tt.want)
			if strings.Contains(err.Error(), "10.0.0.7") && !strings.Contains(tt.url, "10.0.0.7") {
				t.Fatalf("the refusal says where the host points: %v", err)
			}
		})
	}
}
