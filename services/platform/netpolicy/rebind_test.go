package netpolicy_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"distill.dev/services/platform/netpolicy"
	"distill.dev/services/platform/netpolicy/netpolicytest"
)

// rebinder answers the first A query for its name with first and every
// later one with then, as a DNS rebinding attacker does.
type rebinder struct {
	name        string
	first, then netip.Addr
	mu          sync.Mutex
	queries     int
}

func (r *rebinder) answer(name string) []netip.Addr {
	if name != r.name {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.queries++
	if r.queries == 1 {
		return []netip.Addr{r.first}
	}
	return []netip.Addr{r.then}
}

func startDNS(t *testing.T, answer func(string) []netip.Addr) *netpolicytest.DNS {
	t.Helper()
	dns, err := netpolicytest.StartDNS(answer)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dns.Close() })
	return dns
}

// A name passes CheckURL; the policy bites at connect time on the address
// the resolver returned for that very dial, so a name that answered with a
// public address and then with a private one is refused the second time.
func TestRebindingRefusedAtConnect(t *testing.T) {
	r := &rebinder{name: "rebind.test", first: netip.MustParseAddr("93.184.215.14"), then: netip.MustParseAddr("10.0.0.1")}
	dns := startDNS(t, r.answer)
	policy := netpolicy.Policy{}
	if _, err := policy.CheckURL("http://rebind.test/"); err != nil {
		t.Fatalf("CheckURL refused a name: %v", err)
	}

	// There is no internet here, so an address the policy lets through is
	// stopped right after the verdict rather than connected.
	errPassed := errors.New("policy passed")
	var dialled []string
	d := net.Dialer{
		Resolver: dns.Resolver(),
		Timeout:  5 * time.Second,
		Control: func(network, address string, c syscall.RawConn) error {
			dialled = append(dialled, address)
			if err := policy.Control(network, address, c); err != nil {
				return err
			}
			return errPassed
		},
	}
	ctx := t.Context()

	_, err := d.DialContext(ctx, "tcp4", "rebind.test:80")
	if !errors.Is(err, errPassed) {
		t.Fatalf("first dial: got %v, want the public address let through", err)
	}
	_, err = d.DialContext(ctx, "tcp4", "rebind.test:80")
	if !errors.Is(err, netpolicy.ErrBlocked) {
		t.Fatalf("second dial: got %v, want ErrBlocked", err)
	}
	if !strings.Contains(err.Error(), "10.0.0.1 (private range 10.0.0.0/8)") {
		t.Fatalf("second dial: %v does not name the private address", err)
	}
	want := []string{"93.184.215.14:80", "10.0.0.1:80"}
	if strings.Join(dialled, " ") != strings.Join(want, " ") {
		t.Fatalf("dialled %v, want %v", dialled, want)
	}
}

// The same through real connections: a loopback listener is reached while
// allowed, and refused when the name rebinds to a private address.
func TestRebindingRealConnection(t *testing.T) {
	lis, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(lis.Addr().String())

	r := &rebinder{name: "rebind.test", first: netip.MustParseAddr("127.0.0.1"), then: netip.MustParseAddr("192.168.0.10")}
	dns := startDNS(t, r.answer)
	d := net.Dialer{Resolver: dns.Resolver(), Timeout: 5 * time.Second, Control: netpolicy.Policy{AllowLoopback: true}.Control}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()

	c, err := d.DialContext(ctx, "tcp4", net.JoinHostPort("rebind.test", port))
	if err != nil {
		t.Fatalf("first dial: %v", err)
	}
	c.Close()
	_, err = d.DialContext(ctx, "tcp4", net.JoinHostPort("rebind.test", port))
	if !errors.Is(err, netpolicy.ErrBlocked) {
		t.Fatalf("second dial: got %v, want ErrBlocked", err)
	}
}
