package identity

import (
	"math/rand/v2"

	http2 "github.com/bogdanfinn/fhttp/http2"
	utls "github.com/bogdanfinn/utls"
)

// ChromeMajor is the major version of the Chromium the chrome profile was
// captured from: Debian 12's chromium package, 156.0.8078.114.
const ChromeMajor = "156"

// chromeUserAgent is Chromium's reduced User-Agent on Linux: the minor
// version numbers are zeros, as the browser sends them.
const chromeUserAgent = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/" + ChromeMajor + ".0.0.0 Safari/537.36"

// chromeTrustAnchors is the body of the TLS Trust Anchor IDs extension
// (experimental code point 0xca34) Chromium 156 sends: the IDs of its root
// store, as captured.
const chromeTrustAnchors = "\x00\xb8\x05\x82\xdf\x13\x02\x01\x05\x82\xdf\x13\x02\x06\x05\x82" +
	"\xdf\x13\x02\x0d\x05\x82\xdf\x13\x02\x0e\x05\x82\xdf\x13\x02\x0f" +
	"\x05\x82\xdf\x13\x02\x12\x05\x82\xdf\x13\x02\x13\x05\x82\xdf\x13" +
	"\x02\x14\x08\x83\x9a\x64\x8c\x9b\x2d\x01\x07\x08\x83\x9a\x64\x8c" +
	"\x9b\x2d\x01\x08\x08\x83\x9a\x64\x8c\x9b\x2d\x01\x09\x08\x83\x9a" +
	"\x64\x8c\x9b\x2d\x01\x0a\x08\x83\x9a\x64\x8c\x9b\x2d\x01\x0b\x08" +
	"\x83\x9a\x64\x8c\x9b\x2d\x01\x0c\x08\x83\x9a\x64\x8c\x9b\x2d\x01" +
	"\x0d\x08\x83\x9a\x64\x8c\x9b\x2d\x01\x12\x08\x83\x9a\x64\x8c\x9b" +
	"\x2d\x01\x13\x04\xd6\x79\x09\x01\x04\xd6\x79\x09\x04\x04\xd6\x79" +
	"\x09\x05\x04\xd6\x79\x09\x06\x04\xd6\x79\x09\x07\x04\xd6\x79\x09" +
	"\x08\x04\xd6\x79\x09\x0a\x04\xd6\x79\x09\x0b\x04\xd6\x79\x09\x0c" +
	"\x04\xd6\x79\x09\x0d\x04\xd6\x79\x09\x0f"

// Chrome is the Chromium on this project's machines (Debian 12,
// chromium 156, Linux x86_64), built from a capture of that browser's
// first navigation over HTTPS: its ClientHello (JA4
// t13d1517h2_8daaf6152771_cb7bf5808d99), its HTTP/2 preface and its
// request headers. identitytest's tests launch the installed browser and
// fail the day the two drift apart.
func Chrome() *Profile {
	return &Profile{
		name:  ChromeName,
		hello: chromeHello,
		h2: h2Preface{
			settings: []http2.Setting{
				{ID: http2.SettingHeaderTableSize, Val: 65536},
				{ID: http2.SettingEnablePush, Val: 0},
				{ID: http2.SettingInitialWindowSize, Val: 6291456},
				{ID: http2.SettingMaxHeaderListSize, Val: 262144},
			},
			windowUpdate: 15663105,
			// Weight 256 (sent as 255), exclusive, on the root.
			headerPriority: http2.PriorityParam{Exclusive: true, StreamDep: 0, Weight: 255},
			pseudoOrder:    []string{":method", ":authority", ":scheme", ":path"},
		},
		// Over HTTP/1.1 Chromium writes Host and Connection first, its
		// client hints in lower case and no priority field.
		h1: h1Form{
			first: []string{"host", "connection"},
			lower: []string{"sec-ch-ua", "sec-ch-ua-mobile", "sec-ch-ua-platform"},
			omit:  []string{"priority"},
		},
		headers: [][2]string{
			{"sec-ch-ua", `"Not:A-Brand";v="8", "Chromium";v="` + ChromeMajor + `"`},
			{"sec-ch-ua-mobile", "?0"},
			{"sec-ch-ua-platform", `"Linux"`},
			{"upgrade-insecure-requests", "1"},
			{"user-agent", chromeUserAgent},
			{"accept", "text/html,application/xhtml+xml,application/xml;q=0.9,image/jxl,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"},
			{"sec-fetch-site", "none"},
			{"sec-fetch-mode", "navigate"},
			{"sec-fetch-user", "?1"},
			{"sec-fetch-dest", "document"},
			{"accept-encoding", "gzip, deflate, br, zstd"},
			{"accept-language", "en-US,en;q=0.9"},
			{"priority", "u=0, i"},
		},
		// As measured: the cookie goes before priority; on a redirect
		// hop the client hints come after the sec-fetch fields.
		order: []string{
			"sec-ch-ua", "sec-ch-ua-mobile", "sec-ch-ua-platform", "upgrade-insecure-requests", "user-agent", "accept",
			"sec-fetch-site", "sec-fetch-mode", "sec-fetch-user", "sec-fetch-dest", "accept-encoding", "accept-language",
			"cookie", "priority",
		},
		hopOrder: []string{
			"upgrade-insecure-requests", "user-agent", "accept", "sec-fetch-site", "sec-fetch-mode", "sec-fetch-user",
			"sec-fetch-dest", "sec-ch-ua", "sec-ch-ua-mobile", "sec-ch-ua-platform", "accept-encoding", "accept-language",
			"cookie", "priority",
		},
	}
}

// grease is a GREASE value (RFC 8701) chosen at random, for the fields
// utls does not GREASE itself.
func grease() uint16 {
	n := uint16(rand.IntN(16))
	return n<<12 | 0x0a00 | n<<4 | 0x0a
}

// chromeHello is Chromium 156's ClientHello: 15 cipher suites and 17
// extensions besides GREASE, in an order shuffled per connection as
// Chrome shuffles it, and an 18th, pre_shared_key, last, on a connection
// that resumes a session.
func chromeHello() *utls.ClientHelloSpec {
	return &utls.ClientHelloSpec{
		CipherSuites: []uint16{
			utls.GREASE_PLACEHOLDER,
			utls.TLS_AES_128_GCM_SHA256,
			utls.TLS_AES_256_GCM_SHA384,
			utls.TLS_CHACHA20_POLY1305_SHA256,
			utls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
			utls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
			utls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
			utls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
			utls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305,
			utls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305,
			utls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,
			utls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
			utls.TLS_RSA_WITH_AES_128_GCM_SHA256,
			utls.TLS_RSA_WITH_AES_256_GCM_SHA384,
			utls.TLS_RSA_WITH_AES_128_CBC_SHA,
			utls.TLS_RSA_WITH_AES_256_CBC_SHA,
		},
		CompressionMethods: []byte{0}, // none
		Extensions: utls.ShuffleChromeTLSExtensions([]utls.TLSExtension{
			&utls.UtlsGREASEExtension{},
			&utls.SNIExtension{},
			&utls.ExtendedMasterSecretExtension{},
			&utls.RenegotiationInfoExtension{Renegotiation: utls.RenegotiateOnceAsClient},
			&utls.SupportedCurvesExtension{Curves: []utls.CurveID{
				utls.GREASE_PLACEHOLDER, utls.X25519MLKEM768, utls.X25519, utls.CurveP256, utls.CurveP384,
			}},
			&utls.SupportedPointsExtension{SupportedPoints: []byte{0}}, // uncompressed
			&utls.SessionTicketExtension{},
			&utls.ALPNExtension{AlpnProtocols: []string{"h2", "http/1.1"}},
			&utls.StatusRequestExtension{},
			&utls.SignatureAlgorithmsExtension{SupportedSignatureAlgorithms: chromeSignatureSchemes()},
			&utls.SCTExtension{},
			&utls.KeyShareExtension{KeyShares: []utls.KeyShare{
				{Group: utls.CurveID(utls.GREASE_PLACEHOLDER), Data: []byte{0}},
				{Group: utls.X25519MLKEM768},
				{Group: utls.X25519},
			}},
			&utls.PSKKeyExchangeModesExtension{Modes: []uint8{utls.PskModeDHE}},
			&utls.SupportedVersionsExtension{Versions: []uint16{utls.GREASE_PLACEHOLDER, utls.VersionTLS13, utls.VersionTLS12}},
			&utls.UtlsCompressCertExtension{Algorithms: []utls.CertCompressionAlgo{utls.CertCompressionBrotli}},
			&utls.ApplicationSettingsExtensionNew{SupportedProtocols: []string{"h2"}},
			&utls.GenericExtension{Id: 0xca34, Data: []byte(chromeTrustAnchors)},
			utls.BoringGREASEECH(),
			&utls.UtlsGREASEExtension{},
			// Last, and only when resuming a session (OmitEmptyPsk).
			&utls.UtlsPreSharedKeyExtension{},
		}),
	}
}

// chromeSignatureSchemes are Chromium 156's signature algorithms: a
// GREASE value, then ML-DSA-44, -65 and -87, then the classic ones.
func chromeSignatureSchemes() []utls.SignatureScheme {
	return []utls.SignatureScheme{
		utls.SignatureScheme(grease()),
		0x0904, 0x0905, 0x0906, // ML-DSA-44, ML-DSA-65, ML-DSA-87
		utls.ECDSAWithP256AndSHA256,
		utls.PSSWithSHA256,
		utls.PKCS1WithSHA256,
		utls.ECDSAWithP384AndSHA384,
		utls.PSSWithSHA384,
		utls.PKCS1WithSHA384,
		utls.PSSWithSHA512,
		utls.PKCS1WithSHA512,
	}
}
