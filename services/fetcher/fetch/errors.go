package fetch

import (
	"context"
	"errors"
	"net"

	"distill.dev/proto/failure"
	"distill.dev/services/platform/netpolicy"
)

// errTimeout is the cause a fetch's own deadline carries, to tell it from a
// shorter deadline of the caller's.
var errTimeout = errors.New("fetch timeout")

// classify turns whatever went wrong into a *failure.Error whose message
// is where ("fetch <url>" and, on a redirect hop, the hop) and the problem.
// The context is checked before the error itself: once the fetch's time is
// up, whatever the transport says is a consequence.
func (c *call) classify(ctx context.Context, where string, err error) error {
	if fe, ok := errors.AsType[*failure.Error](err); ok {
		return fe
	}
	if be, ok := errors.AsType[*netpolicy.BlockedError](err); ok {
		return failure.Wrap(failure.Blocked, be, "%s", where)
	}
	if ie, ok := errors.AsType[*netpolicy.InvalidURLError](err); ok {
		return failure.Wrap(failure.InvalidURL, ie, "%s", where)
	}
	if ue, ok := errors.AsType[*unsupportedEncoding](err); ok {
		return failure.Wrap(failure.UnsupportedContent, ue, "%s", where)
	}
	switch ctxErr := ctx.Err(); {
	case errors.Is(ctxErr, context.DeadlineExceeded):
		if errors.Is(context.Cause(ctx), errTimeout) {
			return failure.Wrap(failure.Timeout, ctxErr, "%s: no complete answer within the %s timeout", where, c.timeout)
		}
		return failure.Wrap(failure.Timeout, ctxErr, "%s: caller's deadline passed", where)
	case errors.Is(ctxErr, context.Canceled):
		return failure.Wrap(failure.Canceled, ctxErr, "%s: canceled", where)
	}
	err = unwrapURLError(err)
	if ne, ok := errors.AsType[net.Error](err); (ok && ne.Timeout()) || errors.Is(err, errRateDeadline) {
		return failure.Wrap(failure.Timeout, err, "%s", where)
	}
	return failure.Wrap(failure.Network, err, "%s", where)
}
