package host

import (
	"errors"
	"fmt"
)

// Code is one of the seed's safe error codes: the only ones a host-mode
// answer carries, so that nothing about the gateway's insides leaks to the
// model through them.
type Code string

// The safe codes, exactly the seed's.
const (
	InvalidInput                  Code = "INVALID_INPUT"
	NotAuthorized                 Code = "NOT_AUTHORIZED"
	UnsupportedSecurityCapability Code = "UNSUPPORTED_SECURITY_CAPABILITY"
	BudgetExhausted               Code = "BUDGET_EXHAUSTED"
	SessionUnknown                Code = "SESSION_UNKNOWN"
	CleanupPending                Code = "CLEANUP_PENDING"
	ApprovalRequired              Code = "APPROVAL_REQUIRED"
	ApprovalStale                 Code = "APPROVAL_STALE"
	ProviderError                 Code = "PROVIDER_ERROR"
)

// Codes returns the safe codes, in a fresh slice.
func Codes() []Code {
	return []Code{InvalidInput, NotAuthorized, UnsupportedSecurityCapability, BudgetExhausted,
		SessionUnknown, CleanupPending, ApprovalRequired, ApprovalStale, ProviderError}
}

// Error is a host-mode refusal or failure: a safe code and a one-line
// message fit for the model.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

func errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// CodeOf is the safe code of err; an error that carries none is
// PROVIDER_ERROR when it came from a provider and otherwise reported as
// INVALID_INPUT by the caller that knows better. Here: ok is false.
func CodeOf(err error) (Code, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Code, true
	}
	return "", false
}
