// Package netpolicytest provides a DNS server for tests of policy that
// depends on name resolution, such as DNS rebinding, without touching the
// machine's resolver.
package netpolicytest

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"

	"golang.org/x/net/dns/dnsmessage"
)

// DNS is a DNS server on a loopback UDP port. It answers A queries with
// what the answer function returns for the name (lower case, no trailing
// dot), calling it once per A query so that it can change its answer as a
// rebinding server does; a nil answer is NXDOMAIN. AAAA and other queries
// get an empty answer, so tests stay on IPv4.
type DNS struct {
	Addr   string
	conn   net.PacketConn
	answer func(name string) []netip.Addr
	wg     sync.WaitGroup
}

// StartDNS starts a server; Close stops it.
func StartDNS(answer func(name string) []netip.Addr) (*DNS, error) {
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	d := &DNS{Addr: conn.LocalAddr().String(), conn: conn, answer: answer}
	d.wg.Go(d.serve)
	return d, nil
}

// Resolver returns a pure-Go resolver that sends every query to d.
func (d *DNS) Resolver() *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var dialer net.Dialer
			return dialer.DialContext(ctx, "udp", d.Addr)
		},
	}
}

// Close stops the server and waits for it.
func (d *DNS) Close() error {
	err := d.conn.Close()
	d.wg.Wait()
	return err
}

func (d *DNS) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := d.conn.ReadFrom(buf)
		if err != nil {
			return
		}
		if reply, err := d.reply(buf[:n]); err == nil {
			_, _ = d.conn.WriteTo(reply, from)
		}
	}
}

func (d *DNS) reply(query []byte) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, err
	}
	q, err := p.Question()
	if err != nil {
		return nil, err
	}
	// Authoritative and RecursionAvailable keep Go's resolver from
	// treating an empty answer as a lame referral.
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RecursionAvailable: true}
	var addrs []netip.Addr
	if q.Type == dnsmessage.TypeA {
		name := strings.ToLower(strings.TrimSuffix(q.Name.String(), "."))
		if addrs = d.answer(name); addrs == nil {
			rh.RCode = dnsmessage.RCodeNameError
		}
	}

	b := dnsmessage.NewBuilder(nil, rh)
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	for _, a := range addrs {
		if !a.Is4() {
			continue
		}
		rr := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 0}
		if err := b.AResource(rr, dnsmessage.AResource{A: a.As4()}); err != nil {
			return nil, err
		}
	}
	return b.Finish()
}
