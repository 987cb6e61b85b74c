package identitytest

import "testing"

// FoxIO's worked example of JA4 (its technical details): Chrome's
// ciphers and extensions, GREASE among them, give
// t13d1516h2_8daaf6152771_e5627efa2ab1.
func TestJA4SpecExample(t *testing.T) {
	h := &Hello{
		Version: 0x0304,
		SNI:     "example.com",
		Ciphers: NonGREASE([]uint16{0x1301, 0x1302, 0x1303, 0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8, 0xc013, 0xc014, 0x009c, 0x009d, 0x002f, 0x0035}),
		Extensions: []uint16{0x001b, 0x0000, 0x0033, 0x0010, 0x4469, 0x0017, 0x002d, 0x000d, 0x0005,
			0x0023, 0x0012, 0x002b, 0xff01, 0x000b, 0x000a, 0x0015},
		ALPN:    []string{"h2", "http/1.1"},
		SigAlgs: []uint16{0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601},
	}
	if got, want := h.JA4(), "t13d1516h2_8daaf6152771_e5627efa2ab1"; got != want {
		t.Fatalf("JA4 %s, want %s", got, want)
	}
	// GREASE in the signature algorithms, as Chromium sends it, is
	// ignored like every other GREASE value.
	h.SigAlgs = append([]uint16{0x1a1a}, h.SigAlgs...)
	if got, want := h.JA4(), "t13d1516h2_8daaf6152771_e5627efa2ab1"; got != want {
		t.Fatalf("with GREASE: JA4 %s, want %s", got, want)
	}
	// Without SNI or ALPN.
	h.SNI, h.ALPN = "", nil
	if got := h.JA4()[:10]; got != "t13i151600" {
		t.Fatalf("no SNI, no ALPN: JA4 starts %s", got)
	}
}

// A ClientHello cut anywhere is an error, never a panic.
func TestParseClientHelloTruncated(t *testing.T) {
	msg := []byte{1, 0, 0, 45, 3, 3}
	msg = append(msg, make([]byte, 32)...)          // random
	msg = append(msg, 0)                            // session id
	msg = append(msg, 0, 4, 0x13, 0x01, 0x0a, 0x0a) // ciphers
	msg = append(msg, 1, 0)                         // compression
	msg = append(msg, 0, 0)                         // no extensions
	msg[3] = byte(len(msg) - 4)
	h, err := ParseClientHello(msg)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Ciphers) != 1 || h.Ciphers[0] != 0x1301 {
		t.Fatalf("ciphers %x", h.Ciphers)
	}
	for i := range msg {
		if _, err := ParseClientHello(msg[:i]); err == nil {
			t.Fatalf("%d bytes of %d parsed", i, len(msg))
		}
	}
}
