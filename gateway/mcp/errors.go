package mcp

import (
	"errors"
	"regexp"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"distill.dev/gateway/session"
	"distill.dev/proto/failure"
	"distill.dev/services/platform/netpolicy"
)

// argError is a mistake in the call's arguments.
type argError struct{ err error }

func (e argError) Error() string { return e.err.Error() }
func (e argError) Unwrap() error { return e.err }

// errorText is the one line a failed tool call returns: what went wrong
// and, when there is one, what the model can do about it.
func errorText(tool string, err error) string {
	if e, ok := errors.AsType[argError](err); ok {
		return oneLine(tool + ": invalid arguments: " + e.Error() + ". Fix the argument and call " + tool + " again.")
	}
	msg := err.Error()
	if st, ok := status.FromError(err); ok {
		msg = st.Message()
	}
	text := tool + ": " + msg
	if hint := hintFor(tool, err); hint != "" {
		text = strings.TrimRight(text, ". ") + ". " + hint
	}
	return oneLine(text)
}

func hintFor(tool string, err error) string {
	if errors.Is(err, session.ErrMaybeSent) {
		// A confirmed form that may have been received: any hint to retry
		// would send it twice.
		return ""
	}
	switch status.Code(err) {
	case codes.Unimplemented:
		return "This distill server does not offer " + tool + " yet."
	case codes.NotFound:
		if strings.HasPrefix(tool, "session_") {
			return "The session is unknown or closed: start a new one with session_start."
		}
	}
	switch msg := err.Error(); {
	case strings.Contains(msg, failure.AllowLocalMessage):
		return "Call " + tool + " again without allow_local: this server reaches public addresses only, and only its operator can open loopback."
	case strings.Contains(msg, netpolicy.OwnReason):
		return "distill never connects to its own ports, whatever the arguments."
	}
	switch failure.CodeOf(err) {
	case failure.InvalidURL:
		return "Pass an absolute http or https URL."
	case failure.Blocked:
		return "distill fetches public addresses only; loopback needs allow_local=true on a server its operator started with --allow-local, private networks are always refused."
	case failure.RobotsDisallowed:
		return "The site's robots.txt disallows this URL: choose another page."
	case failure.TooLarge:
		return "Raise max_bytes, or fetch a smaller page."
	case failure.Timeout:
		return "Retry, or raise timeout_secs."
	case failure.Network:
		return "Check the URL's host, or retry later."
	case failure.UnsupportedContent:
		return "The response is not an HTML or text page distill can read."
	case failure.RenderFailed:
		return "The headless render failed: retry, or use js=off."
	case failure.Unavailable:
		return "A part of distill is down: retry later."
	case failure.InvalidArgument:
		return "Fix the argument and call " + tool + " again."
	}
	return ""
}

// flagName matches the CLI flag names fetchopts.Validate writes.
var flagName = regexp.MustCompile(`--[a-z][a-z-]*`)

// optionError renders a fetchopts.Validate error under the MCP parameter
// names: --max-bytes is max_bytes, --timeout is timeout_secs.
func optionError(err error) error {
	msg := flagName.ReplaceAllStringFunc(err.Error(), func(flag string) string {
		name := strings.ReplaceAll(strings.TrimPrefix(flag, "--"), "-", "_")
		switch name {
		case "timeout":
			return "timeout_secs"
		case "field":
			return "fields"
		}
		return name
	})
	return argError{errors.New(msg)}
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
