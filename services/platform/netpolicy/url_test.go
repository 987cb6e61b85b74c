package netpolicy

import (
	"errors"
	"strings"
	"testing"
)

// wantInvalid starts the want of a checkURLCases entry that is invalid.
const wantInvalid = "invalid:"

// checkURLCases are the spellings of a URL the policy judges, the red
// team's among them; FuzzCheckURL starts from them too.
var checkURLCases = []struct {
	name  string
	raw   string
	allow bool
	// "" = allowed; "invalid:..." = ErrInvalidURL whose message holds the
	// rest; anything else = ErrBlocked whose message holds it.
	want string
}{
	{name: "public name", raw: "http://example.com/"},
	{name: "https with port and query", raw: "https://example.com:8443/a?b=c#d"},
	{name: "upper-case scheme and host", raw: "HTTP://EXAMPLE.COM/"},
	{name: "name with trailing dot", raw: "http://example.com./"},
	{name: "userinfo before public host", raw: "http://127.0.0.1@example.com/"},
	{name: "localhost as a subdomain label", raw: "http://localhost.example.com/"},
	{name: "numeric-looking label not last", raw: "http://127.0.0.1.nip.io/"},
	{name: "public IPv4 literal", raw: "http://93.184.215.14/"},
	{name: "public IPv6 literal", raw: "http://[2606:4700:4700::1111]/"},

	{name: "loopback dotted", raw: "http://127.0.0.1/", want: "127.0.0.1 (loopback"},
	{name: "userinfo before loopback host", raw: "http://example.com@127.0.0.1/", want: "loopback"},
	{name: "loopback decimal", raw: "http://2130706433/", want: "2130706433 is 127.0.0.1 (loopback"},
	{name: "loopback octal", raw: "http://0177.0.0.1/", want: "0177.0.0.1 is 127.0.0.1"},
	{name: "loopback long octal", raw: "http://017700000001/", want: "is 127.0.0.1"},
	{name: "loopback hex short", raw: "http://0x7f.1/", want: "0x7f.1 is 127.0.0.1"},
	{name: "loopback hex whole", raw: "http://0x7f000001/", want: "is 127.0.0.1"},
	{name: "loopback mixed case hex", raw: "http://0X7F.0x0.0.1/", want: "is 127.0.0.1"},
	{name: "loopback two parts", raw: "http://127.1/", want: "127.1 is 127.0.0.1"},
	{name: "loopback three parts", raw: "http://127.0.1/", want: "127.0.1 is 127.0.0.1"},
	{name: "loopback trailing dot", raw: "http://127.0.0.1./", want: "is 127.0.0.1"},
	{name: "loopback with port", raw: "http://127.0.0.1:8080/x", want: "loopback"},
	{name: "loopback IPv6", raw: "http://[::1]/", want: "::1 (loopback"},
	{name: "loopback IPv6 long form", raw: "http://[0:0:0:0:0:0:0:1]/", want: "is ::1"},
	{name: "loopback IPv4-mapped", raw: "http://[::ffff:127.0.0.1]/", want: "carrying 127.0.0.1"},
	{name: "loopback IPv4-mapped hex", raw: "http://[::ffff:7f00:1]/", want: "carrying 127.0.0.1"},
	{name: "localhost", raw: "http://localhost/", want: "localhost (loopback name)"},
	{name: "localhost upper case", raw: "http://LOCALHOST/", want: "loopback name"},
	{name: "localhost trailing dot", raw: "http://localhost./", want: "loopback name"},
	{name: "localhost subdomain", raw: "http://app.localhost:3000/", want: "loopback name"},
	{name: "localhost full-width", raw: "http://ＬＯＣＡＬＨＯＳＴ/", want: "loopback name"},
	{name: "loopback full-width digits", raw: "http://１２７.０.０.１/", want: "is 127.0.0.1"},
	{name: "loopback ideographic full stops", raw: "http://127。0。0。1/", want: "is 127.0.0.1"},
	{name: "zero host", raw: "http://0/", want: "unspecified"},
	{name: "IPv6 unspecified", raw: "http://[::]/", want: "unspecified"},
	{name: "private with port", raw: "http://10.0.0.1:8080/", want: "10.0.0.1 (private range 10.0.0.0/8)"},
	{name: "private 192.168 short form", raw: "http://192.168.1/", want: "is 192.168.0.1"},
	{name: "metadata", raw: "http://169.254.169.254/latest/meta-data/", want: "cloud metadata"},
	{name: "metadata hex", raw: "http://0xa9fea9fe/", want: "is 169.254.169.254"},
	{name: "metadata decimal", raw: "http://2852039166/", want: "is 169.254.169.254"},
	{name: "metadata IPv4-mapped", raw: "http://[::ffff:169.254.169.254]/", want: "cloud metadata"},
	{name: "link-local IPv6 with zone", raw: "http://[fe80::1%25eth0]/", want: "link-local"},
	{name: "ULA", raw: "https://[fd00::1]:443/", want: "unique local"},

	{name: "allowed loopback", raw: "http://127.0.0.1:8080/", allow: true},
	{name: "allowed localhost", raw: "http://localhost:8080/", allow: true},
	{name: "allowed loopback IPv6", raw: "http://[::1]:9/", allow: true},
	{name: "allowed loopback hex", raw: "http://0x7f.1/", allow: true},
	{name: "allow_local keeps private blocked", raw: "http://10.1.2.3/", allow: true, want: "private range"},
	{name: "allow_local keeps metadata blocked", raw: "http://169.254.169.254/", allow: true, want: "cloud metadata"},

	{name: "ftp", raw: "ftp://x", want: wantInvalid + ` scheme "ftp" is not http or https`},
	{name: "file", raw: "file:///etc/passwd", want: wantInvalid + ` scheme "file"`},
	{name: "javascript", raw: "javascript:alert(1)", want: wantInvalid + ` scheme "javascript"`},
	{name: "gopher", raw: "gopher://127.0.0.1:6379/_INFO", want: wantInvalid + ` scheme "gopher"`},
	{name: "no host", raw: "http://", want: wantInvalid + " no host"},
	{name: "no host with path", raw: "http:///etc/passwd", want: wantInvalid + " no host"},
	{name: "opaque", raw: "http:example.com", want: wantInvalid + " no host"},
	{name: "only dots", raw: "http://./", want: wantInvalid + " no host"},
	{name: "not a url", raw: "not a url", want: wantInvalid + " no scheme"},
	{name: "scheme-relative", raw: "//example.com/", want: wantInvalid + " no scheme"},
	{name: "empty", raw: "", want: wantInvalid + " empty"},
	{name: "IPv4 part over 255", raw: "http://1.2.3.256/", want: wantInvalid + " bad IPv4 host"},
	{name: "IPv4 five parts", raw: "http://1.2.3.4.5/", want: wantInvalid + " more than four parts"},
	{name: "IPv4 number too big", raw: "http://0x100000000/", want: wantInvalid + " out of range"},
	{name: "IPv4 bad octal", raw: "http://09.0.0.1/", want: wantInvalid + " not a base-8 number"},
	{name: "name ending in a number", raw: "http://foo.0x10/", want: wantInvalid + " bad IPv4 host"},
	{name: "percent-encoded host", raw: "http://%31%32%37.0.0.1/", want: wantInvalid},
	{name: "unclosed bracket", raw: "http://[::1/", want: wantInvalid},
	{name: "space in host", raw: "http://exa mple.com/", want: wantInvalid},
	{name: "control character", raw: "http://example.com/\n", want: wantInvalid},
}

func TestCheckURL(t *testing.T) {
	for _, tt := range checkURLCases {
		t.Run(tt.name, func(t *testing.T) {
			u, err := Policy{AllowLoopback: tt.allow}.CheckURL(tt.raw)
			if want, ok := strings.CutPrefix(tt.want, wantInvalid); ok {
				if !errors.Is(err, ErrInvalidURL) || errors.Is(err, ErrBlocked) {
					t.Fatalf("got %v, want ErrInvalidURL", err)
				}
				if _, ok := errors.AsType[*InvalidURLError](err); !ok {
					t.Fatalf("error %T is not an *InvalidURLError", err)
				}
				if !strings.Contains(err.Error(), strings.TrimSpace(want)) {
					t.Fatalf("error %q does not mention %q", err, want)
				}
				return
			}
			checkVerdict(t, err, tt.want)
			if err == nil && u == nil {
				t.Fatal("no URL returned")
			}
		})
	}
}

// The URL returned is the one to dial: a literal in any spelling comes back
// dotted, so the resolver never sees a form it might read differently.
func TestCheckURLCanonicalHost(t *testing.T) {
	tests := []struct{ raw, want string }{
		{raw: "http://0x7f.1:8080/p?q", want: "http://127.0.0.1:8080/p?q"},
		{raw: "http://2130706433/", want: "http://127.0.0.1/"},
		{raw: "http://127.0.0.1./", want: "http://127.0.0.1/"},
		{raw: "http://example.com/x", want: "http://example.com/x"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			u, err := Policy{AllowLoopback: true}.CheckURL(tt.raw)
			if err != nil {
				t.Fatal(err)
			}
			if got := u.String(); got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
}
