package grpcauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
)

// Names tells which name the bearer token of a call stands for: the actor
// a host platform's policy gives each of its tokens. It decides nothing
// about access, which stays the Guard's; it only names who is calling.
type Names struct {
	digests [][sha256.Size]byte
	names   []string
}

// NewNames maps each token to its name. Tokens are held as digests and
// compared in constant time, as the Guard compares them.
func NewNames(byToken map[string]string) (*Names, error) {
	n := &Names{}
	for token, name := range byToken {
		if err := check(token); err != nil {
			return nil, fmt.Errorf("token of %s: %w", name, err)
		}
		n.digests = append(n.digests, sha256.Sum256([]byte(token)))
		n.names = append(n.names, name)
	}
	return n, nil
}

// Of returns the name of the call's token, and false when the call carries
// no token or one without a name.
func (n *Names) Of(ctx context.Context) (string, bool) {
	t, ok := bearer(ctx)
	if !ok || n == nil {
		return "", false
	}
	d := sha256.Sum256([]byte(t))
	name, found := "", false
	// Every digest is compared, so the time taken does not say which
	// matched.
	for i := range n.digests {
		if subtle.ConstantTimeCompare(d[:], n.digests[i][:]) == 1 {
			name, found = n.names[i], true
		}
	}
	return name, found
}
