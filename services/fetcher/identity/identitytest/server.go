package identitytest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Page is what the server answers to every request.
const Page = "<!doctype html><title>identity</title><p>measured</p>"

// RedirectPath answers 302 to AgainPath, setting a cookie, and closes its
// connection (GOAWAY over HTTP/2): what a browser sends on a redirect hop,
// cookie included, and how it resumes the TLS session on a new
// connection are measured at AgainPath.
const (
	RedirectPath = "/redirect"
	AgainPath    = "/again"
	Cookie       = "identity=1"
)

// Capture is what one request said, and the connection it came on.
type Capture struct {
	// Conn numbers the connection (1 for the first accepted); Seq the
	// request on it (0 for its first).
	Conn, Seq int
	// Hello is the ClientHello; JA4 its fingerprint.
	Hello *Hello
	JA4   string
	// Proto is the protocol ALPN settled: "h2" or "http/1.1".
	Proto string
	// H2 is the HTTP/2 fingerprint, nil over HTTP/1.1.
	H2 *H2
	// Path is the first request's path; Headers its header fields in
	// order, names and values as sent (over HTTP/2 names are in lower
	// case, and the pseudo-headers are among them).
	Path    string
	Headers [][2]string
}

// H2 is an HTTP/2 client's fingerprint: what it sends before and with its
// first request.
type H2 struct {
	// Settings are the first SETTINGS frame's, in order.
	Settings []http2.Setting
	// WindowUpdate is the connection's first WINDOW_UPDATE increment, 0 if
	// none came before the first HEADERS.
	WindowUpdate uint32
	// Priorities are the PRIORITY frames before the first HEADERS, as
	// stream:exclusive:dependency:weight.
	Priorities []string
	// HeaderPriority is the first HEADERS frame's priority, as
	// exclusive:dependency:weight, "" when it has none.
	HeaderPriority string
	// PseudoOrder is the order of the pseudo-headers, as m,a,s,p.
	PseudoOrder string
}

// String is the fingerprint in the usual (Akamai) form:
// settings|window update|priorities|pseudo-header order, with the HEADERS
// frame's own priority after it.
func (h *H2) String() string {
	var s []string
	for _, st := range h.Settings {
		s = append(s, fmt.Sprintf("%d:%d", st.ID, st.Val))
	}
	prio := strings.Join(h.Priorities, ",")
	if prio == "" {
		prio = "0"
	}
	return fmt.Sprintf("%s|%d|%s|%s|%s", strings.Join(s, ";"), h.WindowUpdate, prio, h.PseudoOrder, h.HeaderPriority)
}

// Server is a loopback TLS server that captures each connection.
type Server struct {
	ln       net.Listener
	cert     tls.Certificate
	pool     *x509.CertPool
	captures chan Capture
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]struct{} // nil once closed
}

// Start listens on 127.0.0.1 with a self-signed certificate for names
// (and 127.0.0.1). Each connection's capture arrives on Captures. protos
// is what ALPN may settle, in the server's preference: h2 and http/1.1
// when empty.
func Start(names []string, protos ...string) (*Server, error) {
	cert, pool, err := selfSigned(names)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("identitytest: listen: %w", err)
	}
	if len(protos) == 0 {
		protos = []string{"h2", "http/1.1"}
	}
	s := &Server{ln: ln, cert: cert, pool: pool, captures: make(chan Capture, 64), conns: map[net.Conn]struct{}{}}
	s.wg.Go(func() { s.accept(protos) })
	return s, nil
}

// Addr is the listening address.
func (s *Server) Addr() *net.TCPAddr { return s.ln.Addr().(*net.TCPAddr) }

// SPKI is the base64 SHA-256 of the certificate's public key.
func (s *Server) SPKI() string {
	sum := sha256.Sum256(s.cert.Leaf.RawSubjectPublicKeyInfo)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// Roots trusts the server's certificate.
func (s *Server) Roots() *x509.CertPool { return s.pool }

// CertPEM is the server's certificate, PEM-encoded: a file of it is what
// SSL_CERT_FILE names for a client to trust the server.
func (s *Server) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.cert.Leaf.Raw})
}

// Captures delivers a capture for each request, once its head is read.
func (s *Server) Captures() <-chan Capture { return s.captures }

// Next waits for the next connection's capture.
func (s *Server) Next(ctx context.Context) (Capture, error) {
	select {
	case c := <-s.captures:
		return c, nil
	case <-ctx.Done():
		return Capture{}, fmt.Errorf("identitytest: no connection captured: %w", context.Cause(ctx))
	}
}

// Close stops the server and its connections.
func (s *Server) Close() {
	_ = s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		_ = c.Close()
	}
	s.conns = nil
	s.mu.Unlock()
	s.wg.Wait()
}

// deliver hands c to Captures, or drops it when nobody reads them.
func (s *Server) deliver(c Capture) {
	select {
	case s.captures <- c:
	default:
	}
}

func (s *Server) accept(protos []string) {
	for n := 1; ; n++ {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.conns == nil {
			s.mu.Unlock()
			_ = c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Go(func() {
			defer func() {
				_ = c.Close()
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
			}()
			_ = s.serve(c, n, protos)
		})
	}
}

// serve reads the raw ClientHello, replays it into a TLS server, and
// answers the connection's requests.
func (s *Server) serve(raw net.Conn, n int, protos []string) error {
	read, msg, err := readClientHello(raw)
	if err != nil {
		return err
	}
	hello, err := ParseClientHello(msg)
	if err != nil {
		return err
	}
	conn := tls.Server(&replayConn{Conn: raw, r: io.MultiReader(bytes.NewReader(read), raw)},
		&tls.Config{Certificates: []tls.Certificate{s.cert}, NextProtos: protos})
	if err := conn.Handshake(); err != nil {
		return fmt.Errorf("identitytest: handshake: %w", err)
	}
	c := Capture{Conn: n, Hello: hello, JA4: hello.JA4(), Proto: conn.ConnectionState().NegotiatedProtocol}
	if c.Proto == "h2" {
		return s.serveH2(conn, c)
	}
	c.Proto = "http/1.1"
	return s.serveH1(conn, c)
}

// readClientHello reads the records of the ClientHello: the bytes read
// and the handshake message.
func readClientHello(conn net.Conn) (read, msg []byte, err error) {
	var buf bytes.Buffer
	r := io.TeeReader(conn, &buf)
	for need := -1; need < 0 || len(msg) < need; {
		var head [5]byte
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return nil, nil, fmt.Errorf("identitytest: read record: %w", err)
		}
		if head[0] != 22 {
			return nil, nil, errors.New("identitytest: first record is not a handshake")
		}
		body := make([]byte, int(head[3])<<8|int(head[4]))
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, nil, fmt.Errorf("identitytest: read record: %w", err)
		}
		msg = append(msg, body...)
		if need < 0 && len(msg) >= 4 {
			need = 4 + (int(msg[1])<<16 | int(msg[2])<<8 | int(msg[3]))
		}
	}
	return buf.Bytes(), msg, nil
}

// replayConn reads what was already read first.
type replayConn struct {
	net.Conn
	r io.Reader
}

func (c *replayConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// serveH1 captures each request's header order, and answers it.
func (s *Server) serveH1(conn net.Conn, c Capture) error {
	br := bufio.NewReader(conn)
	for seq := 0; ; seq++ {
		head, err := readHead(br)
		if err != nil {
			return err
		}
		r := c
		r.Seq, r.Path, r.Headers = seq, head.path, head.fields
		s.deliver(r)
		status, extra, body := answer(head.path)
		var b strings.Builder
		fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", status, http.StatusText(status))
		for _, kv := range extra {
			fmt.Fprintf(&b, "%s: %s\r\n", kv[0], kv[1])
		}
		if head.path == RedirectPath {
			b.WriteString("Connection: close\r\n")
		}
		fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
		if _, err := io.WriteString(conn, b.String()); err != nil || head.path == RedirectPath {
			return err
		}
	}
}

// answer is the server's answer to path: status, fields, body.
func answer(path string) (int, [][2]string, string) {
	if path == RedirectPath {
		return http.StatusFound, [][2]string{{"location", AgainPath}, {"set-cookie", Cookie + "; Path=/"}}, ""
	}
	return http.StatusOK, [][2]string{{"content-type", "text/html; charset=utf-8"}}, Page
}

type h1Head struct {
	path   string
	fields [][2]string
}

// readHead reads a request head, keeping its fields' order (net/http's
// reader does not); requests here carry no body.
func readHead(br *bufio.Reader) (h1Head, error) {
	var h h1Head
	line, err := br.ReadString('\n')
	if err != nil {
		return h, err
	}
	if parts := strings.Fields(line); len(parts) == 3 {
		h.path = parts[1]
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return h, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			return h, nil
		}
		name, value, _ := strings.Cut(line, ":")
		h.fields = append(h.fields, [2]string{name, strings.TrimSpace(value)})
	}
}

// serveH2 reads the client's frames up to its first HEADERS, then answers
// every request on the connection.
func (s *Server) serveH2(conn net.Conn, c Capture) error {
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(conn, preface); err != nil || string(preface) != http2.ClientPreface {
		return fmt.Errorf("identitytest: no HTTP/2 preface: %v", err)
	}
	fr := http2.NewFramer(conn, conn)
	fr.ReadMetaHeaders = hpack.NewDecoder(65536, nil)
	if err := fr.WriteSettings(); err != nil {
		return err
	}
	h2 := &H2{}
	captured, seq := false, 0
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return err
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if f.IsAck() {
				continue
			}
			if h2.Settings == nil && !captured {
				h2.Settings = []http2.Setting{}
				_ = f.ForeachSetting(func(st http2.Setting) error { h2.Settings = append(h2.Settings, st); return nil })
			}
			if err := fr.WriteSettingsAck(); err != nil {
				return err
			}
		case *http2.WindowUpdateFrame:
			if f.StreamID == 0 && h2.WindowUpdate == 0 && !captured {
				h2.WindowUpdate = f.Increment
			}
		case *http2.PriorityFrame:
			if !captured {
				h2.Priorities = append(h2.Priorities, priority(f.StreamID, f.PriorityParam))
			}
		case *http2.MetaHeadersFrame:
			r, pre := c, *h2
			r.H2 = &pre
			r.Seq = seq
			captured = true
			seq++
			s.captureHeaders(&r, f)
			s.deliver(r)
			if err := answerH2(fr, f.StreamID, r.Path); err != nil {
				return err
			}
			if r.Path == RedirectPath {
				// The hop comes on a new connection, which resumes.
				_ = fr.WriteGoAway(f.StreamID, http2.ErrCodeNo, nil)
				return nil
			}
		}
	}
}

func priority(stream uint32, p http2.PriorityParam) string {
	excl := 0
	if p.Exclusive {
		excl = 1
	}
	return fmt.Sprintf("%d:%d:%d:%d", stream, excl, p.StreamDep, int(p.Weight)+1)
}

// captureHeaders notes the first request's fields and priority.
func (s *Server) captureHeaders(c *Capture, f *http2.MetaHeadersFrame) {
	var pseudo []string
	for _, hf := range f.Fields {
		c.Headers = append(c.Headers, [2]string{hf.Name, hf.Value})
		if strings.HasPrefix(hf.Name, ":") {
			pseudo = append(pseudo, hf.Name[1:2])
		}
		if hf.Name == ":path" {
			c.Path = hf.Value
		}
	}
	c.H2.PseudoOrder = strings.Join(pseudo, ",")
	if f.HasPriority() {
		p := f.Priority
		c.H2.HeaderPriority = strings.TrimPrefix(priority(0, p), "0:")
	}
}

func answerH2(fr *http2.Framer, stream uint32, path string) error {
	status, extra, body := answer(path)
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	fields := []hpack.HeaderField{{Name: ":status", Value: fmt.Sprint(status)}}
	for _, kv := range extra {
		fields = append(fields, hpack.HeaderField{Name: kv[0], Value: kv[1]})
	}
	fields = append(fields, hpack.HeaderField{Name: "content-length", Value: fmt.Sprint(len(body))})
	for _, hf := range fields {
		if err := enc.WriteField(hf); err != nil {
			return err
		}
	}
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: stream, BlockFragment: block.Bytes(), EndHeaders: true}); err != nil {
		return err
	}
	return fr.WriteData(stream, true, []byte(body))
}

// selfSigned makes a certificate for names and 127.0.0.1, and a pool
// that trusts it.
func selfSigned(names []string) (tls.Certificate, *x509.CertPool, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("identitytest: key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "identitytest"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		DNSNames:     names,
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true,

		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("identitytest: certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("identitytest: certificate: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool, nil
}
