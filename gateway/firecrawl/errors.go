package firecrawl

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// codeUnsupported marks a refusal of something distill does not do (yet),
// so that a client can tell it from a malformed request.
const codeUnsupported = "UNSUPPORTED"

// apiError is an answer in Firecrawl's error shape:
// {"success": false, "error": "...", "code": "..."}.
type apiError struct {
	status     int
	code       string
	msg        string
	retryAfter time.Duration
}

func (e *apiError) Error() string { return e.msg }

func badRequest(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

// notSupported refuses a field (or a value of one) distill cannot honour,
// naming it.
func notSupported(field, why string) *apiError {
	msg := field + ": not supported yet by this server"
	if why != "" {
		msg = field + ": not supported: " + why
	}
	return &apiError{status: http.StatusBadRequest, code: codeUnsupported, msg: msg}
}

func writeError(w http.ResponseWriter, e *apiError) {
	if e.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((e.retryAfter+time.Second-1)/time.Second)))
	}
	body := map[string]any{"success": false, "error": e.msg}
	if e.code != "" {
		body["code"] = e.code
	}
	writeJSON(w, e.status, body)
}

// fromFailure translates a distill failure into Firecrawl's status codes:
// the caller's mistakes 400, what policy forbids 403, a timeout 408, a
// budget 429 with Retry-After, a service away 503, the rest 500.
func fromFailure(err error) *apiError {
	if e, ok := errors.AsType[*apiError](err); ok {
		return e
	}
	msg := err.Error()
	switch failure.CodeOf(err) {
	case failure.InvalidURL:
		return &apiError{status: http.StatusBadRequest, code: "BAD_REQUEST_INVALID_URL", msg: "Invalid URL: " + msg}
	case failure.InvalidArgument:
		return &apiError{status: http.StatusBadRequest, code: "BAD_REQUEST", msg: "Bad Request: " + msg}
	case failure.TooLarge, failure.UnsupportedContent:
		return &apiError{status: http.StatusBadRequest, code: codeOf(failure.CodeOf(err)), msg: msg}
	case failure.Blocked, failure.RobotsDisallowed:
		return &apiError{status: http.StatusForbidden, code: codeOf(failure.CodeOf(err)), msg: "Forbidden: " + msg}
	case failure.Timeout:
		return &apiError{status: http.StatusRequestTimeout, code: "SCRAPE_TIMEOUT", msg: "Request Timeout: " + msg}
	case failure.Exhausted:
		return &apiError{status: http.StatusTooManyRequests, code: codeOf(failure.Exhausted), retryAfter: time.Second, msg: msg}
	case failure.Unavailable:
		return &apiError{status: http.StatusServiceUnavailable, code: codeOf(failure.Unavailable), retryAfter: time.Second, msg: msg}
	case failure.NotFound:
		return &apiError{status: http.StatusNotFound, msg: msg}
	case failure.Conflict:
		return &apiError{status: http.StatusConflict, msg: msg}
	}
	return &apiError{status: http.StatusInternalServerError, code: codeOf(failure.CodeOf(err)), msg: msg}
}

// codeOf is distill's error code as a token: BLOCKED, TIMEOUT, ...
func codeOf(c distillv1.ErrorCode) string {
	return strings.TrimPrefix(c.String(), "ERROR_CODE_")
}

// jsonMessage says what was wrong with a body in Firecrawl's words where
// they exist ("Unrecognized key in body").
func jsonMessage(err error) string {
	msg := err.Error()
	if key, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "Unrecognized key in body: " + strings.Trim(key, `"`)
	}
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		if te.Field == "" {
			return "the body must be a JSON object, got " + te.Value
		}
		return fmt.Sprintf("%s: expected %s, got %s", te.Field, te.Type, te.Value)
	}
	if errors.Is(err, io.EOF) {
		return "the body must be a JSON object"
	}
	return strings.TrimPrefix(msg, "json: ")
}

func joinWarnings(w []string) string { return strings.Join(w, "; ") }

// threatProtection refuses Firecrawl's per-request URL screening (block
// lists, risk scans) unless it turns it off: dropping a block list the
// caller relies on would let through what it meant to stop. What distill
// reaches is its network policy's and the host policy's to say.
func threatProtection(raw json.RawMessage) *apiError {
	if isNull(raw) {
		return nil
	}
	var tp struct {
		Mode string `json:"mode"`
	}
	if json.Unmarshal(raw, &tp) == nil && tp.Mode == "off" && !hasOtherKeys(raw, "mode") {
		return nil
	}
	return notSupported("threatProtection", "what distill reaches is its network policy's and the host policy's to say")
}

// hasOtherKeys says whether the JSON object raw has a key besides keep.
func hasOtherKeys(raw json.RawMessage, keep string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return true
	}
	for k := range m {
		if k != keep {
			return true
		}
	}
	return false
}
