package cli

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/pflag"

	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
)

// hinted is an error whose message a newcomer can act on: the original's
// text, reworded or with the fix added.
type hinted struct {
	msg string
	err error
}

func (h hinted) Error() string { return h.msg }
func (h hinted) Unwrap() error { return h.err }

// lookupFailure matches Go's resolver error as it reaches the CLI, across
// process boundaries only as text: "dial tcp: lookup HOST on SERVER: no
// such host", or "lookup HOST: ...".
var lookupFailure = regexp.MustCompile(`(?:dial \w+: )?lookup (\S+?)(?: on \S+)?: `)

// explain gives the failures people meet on a first run the fix they
// need. raw is the URL as given ("" for a whole batch's failure).
func (p *printer) explain(err error, raw string) error {
	msg := err.Error()
	orig := msg
	switch code := failure.CodeOf(err); {
	case p.server != "" && isDialFailure(msg):
		msg = fmt.Sprintf("cannot reach the distill gateway at %s (--server): %s", p.server, msg)
	case code == failure.Blocked && strings.Contains(msg, "(loopback ") && p.server == "" && !p.allowLocal:
		// Loopback only: private addresses stay refused whatever the flag,
		// so they get no hint. A gateway (--server) decides for itself.
		msg += " (use --allow-local)"
	case code == failure.InvalidURL && raw != "" && !strings.Contains(raw, "://"):
		if guess := withScheme(raw); guess != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", guess)
		}
	case lookupFailure.MatchString(msg):
		msg = lookupFailure.ReplaceAllString(msg, "cannot resolve $1: ")
	}
	if msg == orig {
		return err
	}
	return hinted{msg: msg, err: err}
}

// isDialFailure tells a gateway that could not be reached from an error
// the gateway answered: gRPC says so only in words.
func isDialFailure(msg string) bool {
	return strings.Contains(msg, "Error while dialing") || strings.HasPrefix(msg, "connection error") ||
		strings.Contains(msg, "server preface")
}

// withScheme is raw, a URL given without a scheme, as the https URL it
// most likely means ("example.com" -> "https://example.com/"), or "" when
// it does not look like a host name at all.
func withScheme(raw string) string {
	host, rest, _ := strings.Cut(raw, "/")
	if host == "" || strings.ContainsAny(raw, " \t") || (!strings.Contains(host, ".") && !strings.HasPrefix(host, "localhost")) {
		return ""
	}
	return "https://" + host + "/" + rest
}

// checkMaxBytes refuses a --max-bytes above what distill can carry, naming
// the ceiling in words people use.
func checkMaxBytes(fs *pflag.FlagSet, maxBytes int64) error {
	if fs.Changed("max-bytes") && maxBytes > fetchopts.MaxBytesLimit {
		return usagef("--max-bytes %d is above distill's ceiling of %d bytes (%d MiB): give --max-bytes %d or less",
			maxBytes, fetchopts.MaxBytesLimit, fetchopts.MaxBytesLimit>>20, fetchopts.MaxBytesLimit)
	}
	return nil
}
