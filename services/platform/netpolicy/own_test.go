package netpolicy

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
)

func TestOwnRefusedEvenWithLoopback(t *testing.T) {
	own := NewOwn()
	own.Add(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7000}, "gRPC port")
	removeMetrics := own.Add(&net.TCPAddr{IP: net.IPv6loopback, Port: 9090}, "metrics port")
	own.Add(&net.TCPAddr{IP: net.IPv4zero, Port: 7010}, "MCP HTTP port")
	p := Policy{AllowLoopback: true, Own: own}

	tests := []struct {
		name string
		addr string
		want string // "" = allowed, else a substring of the refusal
	}{
		{name: "own gRPC port", addr: "127.0.0.1:7000", want: "distill's own gRPC port 127.0.0.1:7000"},
		{name: "own gRPC port IPv4-mapped", addr: "[::ffff:127.0.0.1]:7000", want: "gRPC port"},
		{name: "another loopback port", addr: "127.0.0.1:7001"},
		{name: "the port on another loopback address", addr: "127.0.0.2:7000"},
		{name: "own metrics port IPv6", addr: "[::1]:9090", want: "metrics port"},
		{name: "unspecified listener on 127.0.0.1", addr: "127.0.0.1:7010", want: "MCP HTTP port"},
		{name: "unspecified listener on other loopback", addr: "127.3.2.1:7010", want: "MCP HTTP port"},
		{name: "unspecified listener on ::1", addr: "[::1]:7010", want: "MCP HTTP port"},
		{name: "public address on the unspecified listener's port", addr: "93.184.215.14:7010"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := p.Control("tcp", tt.addr, nil)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (!errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("got %v, want a refusal containing %q", err, tt.want)
			}
		})
	}

	removeMetrics()
	if err := p.Control("tcp", "[::1]:9090", nil); err != nil {
		t.Errorf("a removed listener is still refused: %v", err)
	}
	// Without allow_local loopback is refused for being loopback, and says so.
	if err := (Policy{Own: own}).Control("tcp", "127.0.0.1:7000", nil); err == nil || !strings.Contains(err.Error(), "loopback 127.0.0.0/8") {
		t.Errorf("strict policy: %v", err)
	}
}

func TestOwnUnspecifiedCoversInterfaceAddresses(t *testing.T) {
	own := NewOwn()
	own.Add(&net.TCPAddr{IP: net.IPv6unspecified, Port: 7000}, "gRPC port")
	addrs := interfaceAddrs()
	if len(addrs) == 0 {
		t.Fatal("no interface addresses")
	}
	for _, a := range addrs {
		if err := own.check(netip.AddrPortFrom(a, 7000)); err == nil {
			t.Errorf("%s:7000 is this machine's, on a listener of every address, and was not refused", a)
		}
	}
}

func TestCheckURLRefusesOwnPort(t *testing.T) {
	own := NewOwn()
	own.Add(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80}, "gRPC port")
	own.Add(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7000}, "gRPC port")
	p := Policy{AllowLoopback: true, Own: own}
	for _, raw := range []string{"http://127.0.0.1:7000/", "http://2130706433:7000/x", "http://127.0.0.1/", "http://[::ffff:127.0.0.1]:7000/"} {
		if _, err := p.CheckURL(raw); !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), "distill's own gRPC port") {
			t.Errorf("%s: %v", raw, err)
		}
	}
	for _, raw := range []string{"http://127.0.0.1:7001/", "https://127.0.0.1/", "http://localhost:7000/"} {
		// A name is judged where it is dialled, by Control.
		if _, err := p.CheckURL(raw); err != nil {
			t.Errorf("%s: %v", raw, err)
		}
	}
}
