// Package identitytest is a loopback TLS server that measures who dials
// it: the JA4 of the raw ClientHello and the HTTP/2 fingerprint of the
// connection (SETTINGS, WINDOW_UPDATE, PRIORITY, pseudo-header order),
// then answers like a site. It is for tests only: tests of the identity
// profiles compare what a browser sends with what distill sends.
package identitytest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Hello is what a ClientHello says, as JA4 reads it.
type Hello struct {
	Version    uint16   // highest of supported_versions, else the legacy version
	SNI        string   // server_name, "" when absent
	Ciphers    []uint16 // in order sent, GREASE removed
	Extensions []uint16 // in order sent, GREASE removed
	ALPN       []string
	SigAlgs    []uint16 // signature_algorithms, in order sent, GREASE kept
	// Groups are supported_groups, KeyShares the groups of key_share,
	// in order sent, GREASE removed: what JA4 does not hash.
	Groups, KeyShares []uint16
	// Data is each extension's body, by type.
	Data map[uint16][]byte
}

// isGREASE reports a GREASE value (RFC 8701): 0x?a?a with equal bytes.
func isGREASE(v uint16) bool {
	return v&0x0f0f == 0x0a0a && v>>8 == v&0xff
}

// ParseClientHello reads a ClientHello handshake message (type byte
// first, without the record header).
func ParseClientHello(msg []byte) (*Hello, error) {
	r := reader(msg)
	if t, ok := r.u8(); !ok || t != 1 {
		return nil, errors.New("not a ClientHello")
	}
	body, ok := r.vec(3)
	if !ok {
		return nil, errors.New("truncated ClientHello")
	}
	r = body
	legacy, ok1 := r.u16()
	_, ok2 := r.bytes(32)
	_, ok3 := r.vec(1) // session id
	ciphers, ok4 := r.vec(2)
	_, ok5 := r.vec(1) // compression
	exts, ok6 := r.vec(2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
		return nil, errors.New("truncated ClientHello")
	}
	h := &Hello{Version: legacy, Data: map[uint16][]byte{}}
	for len(ciphers) >= 2 {
		c, _ := ciphers.u16()
		if !isGREASE(c) {
			h.Ciphers = append(h.Ciphers, c)
		}
	}
	for len(exts) > 0 {
		typ, okT := exts.u16()
		data, okD := exts.vec(2)
		if !okT || !okD {
			return nil, errors.New("truncated extension")
		}
		if isGREASE(typ) {
			continue
		}
		h.Extensions = append(h.Extensions, typ)
		h.Data[typ] = data
		h.readExtension(typ, data)
	}
	return h, nil
}

// readExtension notes what JA4 needs of one extension.
func (h *Hello) readExtension(typ uint16, data reader) {
	switch typ {
	case 0: // server_name
		list, _ := data.vec(2)
		if _, ok := list.u8(); ok {
			name, _ := list.vec(2)
			h.SNI = string(name)
		}
	case 16: // ALPN
		list, _ := data.vec(2)
		for len(list) > 0 {
			p, ok := list.vec(1)
			if !ok {
				return
			}
			h.ALPN = append(h.ALPN, string(p))
		}
	case 13: // signature_algorithms
		list, _ := data.vec(2)
		h.SigAlgs = list.u16s()
	case 10: // supported_groups
		list, _ := data.vec(2)
		h.Groups = NonGREASE(list.u16s())
	case 51: // key_share
		list, _ := data.vec(2)
		for len(list) >= 2 {
			g, _ := list.u16()
			if _, ok := list.vec(2); !ok {
				return
			}
			if !isGREASE(g) {
				h.KeyShares = append(h.KeyShares, g)
			}
		}
	case 43: // supported_versions
		list, _ := data.vec(1)
		for len(list) >= 2 {
			v, _ := list.u16()
			if !isGREASE(v) && v > h.Version {
				h.Version = v
			}
		}
	}
}

// JA4 is the hello's JA4 fingerprint over TCP (FoxIO's JA4 spec):
// t<version><d|i><ciphers><extensions><alpn>_<cipher hash>_<extension hash>.
func (h *Hello) JA4() string {
	sni := "i"
	if h.SNI != "" {
		sni = "d"
	}
	a := fmt.Sprintf("t%s%s%02d%02d%s", ja4Version(h.Version), sni,
		min(len(h.Ciphers), 99), min(len(h.Extensions), 99), ja4ALPN(h.ALPN))
	ciphers := slices.Sorted(slices.Values(h.Ciphers))
	var exts []uint16
	for _, e := range h.Extensions {
		if e != 0 && e != 16 {
			exts = append(exts, e)
		}
	}
	slices.Sort(exts)
	c := hexList(exts)
	// GREASE is ignored here too (Chromium GREASEs its signature
	// algorithms).
	if sigs := NonGREASE(h.SigAlgs); len(sigs) > 0 {
		c += "_" + hexList(sigs)
	}
	return a + "_" + ja4Hash(hexList(ciphers), len(ciphers)) + "_" + ja4Hash(c, len(exts))
}

func ja4Version(v uint16) string {
	switch v {
	case 0x0304:
		return "13"
	case 0x0303:
		return "12"
	case 0x0302:
		return "11"
	case 0x0301:
		return "10"
	case 0x0300:
		return "s3"
	}
	return "00"
}

// ja4ALPN is the first and last character of the first ALPN value, "00"
// without one; a value that does not start and end with an alphanumeric
// gives the first and last hex digit of its bytes instead.
func ja4ALPN(alpn []string) string {
	if len(alpn) == 0 || alpn[0] == "" {
		return "00"
	}
	p := alpn[0]
	first, last := p[0], p[len(p)-1]
	if isAlnum(first) && isAlnum(last) {
		return string([]byte{first, last})
	}
	hx := hex.EncodeToString([]byte(p))
	return hx[:1] + hx[len(hx)-1:]
}

func isAlnum(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

func hexList(vs []uint16) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprintf("%04x", v)
	}
	return strings.Join(parts, ",")
}

// ja4Hash is the first 12 hex digits of the SHA-256 of s, or twelve
// zeros when the list it hashes is empty.
func ja4Hash(s string, n int) string {
	if n == 0 {
		return "000000000000"
	}
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:12]
}

// NonGREASE is vs without its GREASE values.
func NonGREASE(vs []uint16) []uint16 {
	var out []uint16
	for _, v := range vs {
		if !isGREASE(v) {
			out = append(out, v)
		}
	}
	return out
}

// reader reads TLS's length-prefixed fields.
type reader []byte

func (r *reader) bytes(n int) ([]byte, bool) {
	if len(*r) < n {
		return nil, false
	}
	b := (*r)[:n]
	*r = (*r)[n:]
	return b, true
}

func (r *reader) u8() (uint8, bool) {
	b, ok := r.bytes(1)
	if !ok {
		return 0, false
	}
	return b[0], true
}

func (r *reader) u16() (uint16, bool) {
	b, ok := r.bytes(2)
	if !ok {
		return 0, false
	}
	return binary.BigEndian.Uint16(b), true
}

// u16s reads the rest as 16-bit values.
func (r *reader) u16s() []uint16 {
	var out []uint16
	for len(*r) >= 2 {
		v, _ := r.u16()
		out = append(out, v)
	}
	return out
}

// vec reads a vector whose length takes width bytes (1 to 3).
func (r *reader) vec(width int) (reader, bool) {
	lb, ok := r.bytes(width)
	if !ok {
		return nil, false
	}
	n := 0
	for _, b := range lb {
		n = n<<8 | int(b)
	}
	b, ok := r.bytes(n)
	return reader(b), ok
}
