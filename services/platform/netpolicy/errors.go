package netpolicy

import (
	"errors"
	"net/netip"
)

// ErrBlocked matches every refusal of the policy: errors.Is(err, ErrBlocked).
var ErrBlocked = errors.New("blocked by network policy")

// ErrInvalidURL matches every URL CheckURL cannot judge because it is not a
// well-formed http(s) URL. It is kept apart from ErrBlocked: a typo is the
// caller's to fix, a refusal is the host's decision.
var ErrInvalidURL = errors.New("invalid URL")

// BlockedError is a refusal. Host is the name or literal as the caller wrote
// it, when there was one; Addr the address judged, when there was one.
type BlockedError struct {
	Host   string
	Addr   netip.Addr
	Reason string
}

func (e *BlockedError) Error() string {
	target := e.Host
	if e.Addr.IsValid() {
		target = e.Addr.String()
		if e.Host != "" && e.Host != target {
			target = e.Host + " is " + target
		}
	}
	return "blocked by network policy: " + target + " (" + e.Reason + ")"
}

// Is makes errors.Is(err, ErrBlocked) true.
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }

// InvalidURLError says why a URL is not a usable http(s) URL. URL is the
// input; the message leaves it out because callers name it already.
type InvalidURLError struct {
	URL    string
	Reason string
}

func (e *InvalidURLError) Error() string { return "invalid URL: " + e.Reason }

// Is makes errors.Is(err, ErrInvalidURL) true.
func (e *InvalidURLError) Is(target error) bool { return target == ErrInvalidURL }
