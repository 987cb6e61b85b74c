// Package grpcauth guards a distill gRPC server with bearer tokens and
// gives its clients the credentials that carry one. Two kinds of token
// exist: an API token may make every call but the operator's (emptying the
// fetch cache, say), an operator token may make them all. Health checking
// and server reflection stay open, so that probes and tools like grpcurl
// work without a secret.
package grpcauth

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"unicode"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// MinTokenLength refuses tokens short enough to guess: 16 characters is
// 96 bits of base64.
const MinTokenLength = 16

// openPrefixes are the services every caller may use: probes and grpcurl
// carry no token.
var openPrefixes = []string{
	"/grpc.health.v1.Health/",
	"/grpc.reflection.v1.ServerReflection/",
	"/grpc.reflection.v1alpha.ServerReflection/",
}

// Config is who may call.
type Config struct {
	// Tokens may make every call but OperatorMethods.
	Tokens []string
	// OperatorTokens may make every call.
	OperatorTokens []string
	// OperatorMethods are full method names ("/pkg.Service/Method") that
	// only an operator token may call.
	OperatorMethods []string
	// ScopedTokens may call only the methods under ScopedPrefix
	// ("/pkg.Service/"): a host platform's actor tokens, which must not
	// reach the calls that take no host policy.
	ScopedTokens []string
	ScopedPrefix string
}

// Guard checks every call's bearer token.
type Guard struct {
	tokens, operators [][sha256.Size]byte
	// scoped changes while the server runs (SetScoped): a host policy
	// reloaded on SIGHUP adds and removes actors' tokens.
	scoped          atomic.Pointer[[][sha256.Size]byte]
	operatorMethods map[string]bool
	scopedPrefix    string
	// enabled is decided once, at New: a reload that empties the scoped
	// tokens must not open a guarded server, nor one that adds some close
	// a server that was open.
	enabled bool
}

// New returns a guard admitting cfg's tokens. With no token at all it
// admits every call, operator calls included: the server is then meant for
// its own machine, whose user is its operator (see Loopback).
func New(cfg Config) (*Guard, error) {
	g := &Guard{operatorMethods: map[string]bool{}}
	var err error
	if g.tokens, err = digests(cfg.Tokens); err != nil {
		return nil, err
	}
	if g.operators, err = digests(cfg.OperatorTokens); err != nil {
		return nil, err
	}
	scoped, err := digests(cfg.ScopedTokens)
	if err != nil {
		return nil, err
	}
	if len(scoped) > 0 && cfg.ScopedPrefix == "" {
		return nil, errors.New("scoped tokens need the prefix of the methods they may call")
	}
	g.scoped.Store(&scoped)
	g.scopedPrefix = cfg.ScopedPrefix
	g.enabled = len(g.tokens)+len(g.operators)+len(scoped) > 0
	for _, m := range cfg.OperatorMethods {
		g.operatorMethods[m] = true
	}
	return g, nil
}

// Enabled reports whether calls need a token. It is fixed when the guard
// is made.
func (g *Guard) Enabled() bool { return g.enabled }

// SetScoped replaces the scoped tokens, for the calls that start from now
// on: the tokens of a host policy that was reloaded. A guard made without
// a scoped prefix takes none, and a guard made open stays open.
func (g *Guard) SetScoped(tokens []string) error {
	d, err := digests(tokens)
	if err != nil {
		return err
	}
	if len(d) > 0 && g.scopedPrefix == "" {
		return errors.New("scoped tokens need the prefix of the methods they may call")
	}
	g.scoped.Store(&d)
	return nil
}

// digests hashes each token, so that comparing them takes the same time
// whatever their lengths.
func digests(tokens []string) ([][sha256.Size]byte, error) {
	out := make([][sha256.Size]byte, 0, len(tokens))
	for i, t := range tokens {
		if err := check(t); err != nil {
			return nil, fmt.Errorf("token %d: %w", i+1, err)
		}
		out = append(out, sha256.Sum256([]byte(t)))
	}
	return out, nil
}

func check(t string) error {
	if len(t) < MinTokenLength {
		return fmt.Errorf("%d characters, want at least %d (make one with: head -c 32 /dev/urandom | base64)", len(t), MinTokenLength)
	}
	if strings.IndexFunc(t, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return fmt.Errorf("contains white space or a control character")
	}
	return nil
}

// ServerOptions are the interceptors that guard a server's unary and
// streaming calls.
func (g *Guard) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			if err := g.authorize(ctx, info.FullMethod); err != nil {
				return nil, err
			}
			return handler(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
			if err := g.authorize(ss.Context(), info.FullMethod); err != nil {
				return err
			}
			return handler(srv, ss)
		}),
	}
}

// authorize returns nil when the call's token may call method, and the
// gRPC error to answer with otherwise.
func (g *Guard) authorize(ctx context.Context, method string) error {
	if !g.Enabled() {
		return nil
	}
	for _, p := range openPrefixes {
		if strings.HasPrefix(method, p) {
			return nil
		}
	}
	token, ok := bearer(ctx)
	if !ok {
		return status.Error(codes.Unauthenticated, "this server needs a bearer token: send the metadata 'authorization: Bearer <token>'")
	}
	api, operator, scoped := g.admit(token)
	switch {
	case scoped && !api && !operator && !strings.HasPrefix(method, g.scopedPrefix):
		return status.Errorf(codes.PermissionDenied, "%s is not for this token: it may call only %s", method, strings.TrimSuffix(g.scopedPrefix, "/"))
	case !scoped && !api && !operator:
		return status.Error(codes.Unauthenticated, ErrUnknownToken.Error())
	case g.operatorMethods[method] && !operator:
		return status.Errorf(codes.PermissionDenied, "%s is an operator call: it needs an operator token", method)
	}
	return nil
}

// admit says whether token is an API token, an operator token, a token
// scoped to one service, or none of them.
func (g *Guard) admit(token string) (api, operator, scoped bool) {
	d := sha256.Sum256([]byte(token))
	// Every configured token is compared, whichever matches, so the time
	// taken says nothing about which one, if any, was close.
	return match(d, g.tokens), match(d, g.operators), match(d, *g.scoped.Load())
}

// Operator reports whether the call may make operator calls: it carries an
// operator token, or the guard is open (its machine's user is its
// operator). A server that answers operator calls and others in one
// method asks it.
func (g *Guard) Operator(ctx context.Context) bool {
	if !g.Enabled() {
		return true
	}
	token, ok := bearer(ctx)
	if !ok {
		return false
	}
	_, operator, _ := g.admit(token)
	return operator
}

// Errors of CheckHeader, for the HTTP doors that share the gRPC API's
// tokens.
var (
	ErrNoToken      = errors.New("this server needs a bearer token: send the header 'Authorization: Bearer <token>'")
	ErrUnknownToken = errors.New("the bearer token is not one this server accepts")
)

// CheckHeader admits an HTTP request whose Authorization header carries an
// API or operator token, in constant time, as the gRPC calls are; with no
// tokens configured every request is admitted. It returns ErrNoToken or
// ErrUnknownToken otherwise.
func (g *Guard) CheckHeader(authorization string) error {
	if !g.Enabled() {
		return nil
	}
	token, ok := parseBearer(authorization)
	if !ok {
		return ErrNoToken
	}
	// A scoped token reaches its own service alone, never these doors.
	if api, operator, _ := g.admit(token); !api && !operator {
		return ErrUnknownToken
	}
	return nil
}

func match(d [sha256.Size]byte, set [][sha256.Size]byte) bool {
	found := 0
	for i := range set {
		found |= subtle.ConstantTimeCompare(d[:], set[i][:])
	}
	return found == 1
}

// bearer is the token of the call's "authorization: Bearer <token>".
func bearer(ctx context.Context) (string, bool) {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get("authorization") {
		if token, ok := parseBearer(v); ok {
			return token, true
		}
	}
	return "", false
}

// parseBearer is the token of "Bearer <token>".
func parseBearer(v string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(v), " ")
	if ok && strings.EqualFold(scheme, "bearer") {
		return strings.TrimSpace(token), true
	}
	return "", false
}

// ParseList splits a comma-separated list of tokens, dropping empty items.
func ParseList(s string) []string {
	var out []string
	for t := range strings.SplitSeq(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// ReadFile reads tokens one a line; blank lines and lines starting with #
// are skipped.
func ReadFile(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}

// Loopback reports whether addr (host:port) listens on this machine only:
// a loopback IP or "localhost". An empty host listens everywhere.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// Bearer is per-call credentials carrying a token as "authorization:
// Bearer <token>".
type Bearer string

// GetRequestMetadata implements credentials.PerRPCCredentials.
func (b Bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials.
// distill's gRPC is plaintext, meant for loopback or behind a TLS-terminating
// proxy or mesh; gRPC would otherwise refuse to send the token at all.
func (Bearer) RequireTransportSecurity() bool { return false }

// DialOption sends token with every call on a connection.
func DialOption(token string) grpc.DialOption {
	return grpc.WithPerRPCCredentials(Bearer(token))
}
