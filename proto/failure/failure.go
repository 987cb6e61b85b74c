// Package failure carries distill's typed errors across process boundaries.
// An *Error has an ErrorCode callers branch on; it becomes a gRPC status with
// the code attached as a detail, and comes back as an *Error on the client
// side, so in-process and remote calls fail alike.
package failure

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// Short names for the error codes.
const (
	InvalidURL         = distillv1.ErrorCode_ERROR_CODE_INVALID_URL
	Blocked            = distillv1.ErrorCode_ERROR_CODE_BLOCKED
	RobotsDisallowed   = distillv1.ErrorCode_ERROR_CODE_ROBOTS_DISALLOWED
	TooLarge           = distillv1.ErrorCode_ERROR_CODE_TOO_LARGE
	Timeout            = distillv1.ErrorCode_ERROR_CODE_TIMEOUT
	Network            = distillv1.ErrorCode_ERROR_CODE_NETWORK
	UnsupportedContent = distillv1.ErrorCode_ERROR_CODE_UNSUPPORTED_CONTENT
	RenderFailed       = distillv1.ErrorCode_ERROR_CODE_RENDER_FAILED
	Canceled           = distillv1.ErrorCode_ERROR_CODE_CANCELED
	Internal           = distillv1.ErrorCode_ERROR_CODE_INTERNAL
	InvalidArgument    = distillv1.ErrorCode_ERROR_CODE_INVALID_ARGUMENT
	NotFound           = distillv1.ErrorCode_ERROR_CODE_NOT_FOUND
	Exhausted          = distillv1.ErrorCode_ERROR_CODE_EXHAUSTED
	Unavailable        = distillv1.ErrorCode_ERROR_CODE_UNAVAILABLE
	Conflict           = distillv1.ErrorCode_ERROR_CODE_CONFLICT
)

// AllowLocalMessage is the refusal of a request's allow_local by a
// process whose operator did not allow loopback; it names the flag that
// does.
const AllowLocalMessage = "allow_local refused: this server was not started with --allow-local"

// AllowLocalRefused is the error of a request that asked for allow_local
// where the operator did not allow it: loopback access is the operator's
// to grant, never the caller's.
func AllowLocalRefused() *Error {
	return &Error{Code: InvalidArgument, Message: AllowLocalMessage}
}

// Error is a failure with a code. Its message is one line naming the
// problem; Err, when set, is the cause.
type Error struct {
	Code    distillv1.ErrorCode
	Message string
	Err     error
}

// New returns an *Error with a formatted message.
func New(code distillv1.ErrorCode, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error with a message and a cause.
func Wrap(code distillv1.ErrorCode, err error, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Err: err}
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is match any *Error of the same code, so callers can test
// errors.Is(err, &failure.Error{Code: failure.Blocked}).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Err == nil && t.Code == e.Code
}

// GRPCStatus lets a gRPC server send the error with its code intact.
func (e *Error) GRPCStatus() *status.Status {
	st := status.New(grpcCode(e.Code), e.Error())
	if withDetail, err := st.WithDetails(&distillv1.Error{Code: e.Code, Message: e.Error()}); err == nil {
		return withDetail
	}
	return st
}

// CodeOf classifies any error: an *Error in the chain, a gRPC status from a
// remote service, or a context error.
func CodeOf(err error) distillv1.ErrorCode {
	if err == nil {
		return distillv1.ErrorCode_ERROR_CODE_UNSPECIFIED
	}
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return Timeout
	case errors.Is(err, context.Canceled):
		return Canceled
	}
	if st, ok := status.FromError(err); ok {
		for _, d := range st.Details() {
			if pe, ok := d.(*distillv1.Error); ok {
				return pe.GetCode()
			}
		}
		switch st.Code() {
		case codes.DeadlineExceeded:
			return Timeout
		case codes.Canceled:
			return Canceled
		case codes.InvalidArgument:
			return InvalidArgument
		}
	}
	return Internal
}

// FromRemote turns an error returned by a gRPC client into an *Error with
// the code and message the server sent. Other errors pass through CodeOf.
func FromRemote(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*Error](err); ok {
		return err
	}
	if st, ok := status.FromError(err); ok {
		for _, d := range st.Details() {
			if pe, ok := d.(*distillv1.Error); ok {
				// The status message holds any wrapping the server added.
				return &Error{Code: pe.GetCode(), Message: st.Message()}
			}
		}
		return &Error{Code: CodeOf(err), Message: st.Message()}
	}
	return &Error{Code: CodeOf(err), Message: err.Error()}
}

// Proto returns the error as data, for batch and job results.
func Proto(err error) *distillv1.Error {
	if err == nil {
		return nil
	}
	return &distillv1.Error{Code: CodeOf(err), Message: err.Error()}
}

// FromProto turns an error carried as data back into an *Error.
func FromProto(pe *distillv1.Error) *Error {
	if pe == nil {
		return nil
	}
	return &Error{Code: pe.GetCode(), Message: pe.GetMessage()}
}

func grpcCode(c distillv1.ErrorCode) codes.Code {
	switch c {
	case InvalidURL, InvalidArgument:
		return codes.InvalidArgument
	case Blocked, RobotsDisallowed:
		return codes.PermissionDenied
	case TooLarge, Exhausted:
		return codes.ResourceExhausted
	case NotFound:
		return codes.NotFound
	case Conflict:
		return codes.Aborted
	case Timeout:
		return codes.DeadlineExceeded
	case Network, RenderFailed, Unavailable:
		return codes.Unavailable
	case UnsupportedContent:
		return codes.FailedPrecondition
	case Canceled:
		return codes.Canceled
	default:
		return codes.Internal
	}
}
