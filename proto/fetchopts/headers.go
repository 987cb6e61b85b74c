package fetchopts

import (
	"errors"
	"fmt"
	"net/textproto"
	"strings"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// Limits of a request's own headers.
const (
	MaxHeaders     = 32
	MaxHeaderBytes = 8 << 10
)

// reservedHeaders are the headers the fetcher owns: the message's framing
// and the connection's, the encodings it decodes, and what a proxy reads.
var reservedHeaders = map[string]bool{
	"Host": true, "Content-Length": true, "Content-Type": true, "Transfer-Encoding": true,
	"Connection": true, "Keep-Alive": true, "Upgrade": true, "Te": true, "Trailer": true,
	"Accept-Encoding": true, "Expect": true,
}

// CheckHeaders checks the headers a request asks the fetch to send: valid
// names and values, none the fetcher owns (Host, the framing, the
// connection's, Accept-Encoding, Proxy-*), at most MaxHeaders of them in
// MaxHeaderBytes.
func CheckHeaders(h map[string]string) error {
	if len(h) > MaxHeaders {
		return fmt.Errorf("headers: at most %d, got %d", MaxHeaders, len(h))
	}
	size := 0
	for name, value := range h {
		size += len(name) + len(value)
		if !validName(name) {
			return fmt.Errorf("headers: %q is not a header name", name)
		}
		canonical := textproto.CanonicalMIMEHeaderKey(name)
		if reservedHeaders[canonical] || strings.HasPrefix(canonical, "Proxy-") || strings.HasPrefix(canonical, "Sec-") {
			return fmt.Errorf("headers: %s is the fetcher's to send", canonical)
		}
		if strings.ContainsAny(value, "\r\n\x00") {
			return fmt.Errorf("headers: the value of %s holds a line break or NUL", canonical)
		}
	}
	if size > MaxHeaderBytes {
		return fmt.Errorf("headers: %d bytes, over the limit of %d", size, MaxHeaderBytes)
	}
	return nil
}

// validName reports whether name is an HTTP token (RFC 9110 5.1).
func validName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("!#$%&'*+-.^_`|~", r):
		default:
			return false
		}
	}
	return true
}

func validateHeaders(o *distillv1.FetchOptions) error {
	if len(o.GetHeaders()) == 0 {
		return nil
	}
	if Browser(o) || o.GetJs() != distillv1.JsMode_JS_MODE_UNSPECIFIED && o.GetJs() != distillv1.JsMode_JS_MODE_OFF {
		return errors.New("headers go with the fetch alone: a browser would load the page without them (not with --js auto or always, nor browser work)")
	}
	return CheckHeaders(o.GetHeaders())
}
