package host

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"
)

// Statuses of an envelope.
const (
	StatusOK             = "ok"
	StatusTruncated      = "truncated"
	StatusError          = "error"
	StatusUnknown        = "unknown"
	StatusCleanupPending = "cleanup_pending"
)

// Envelope is every host-mode answer: the seed's result with its
// provenance. JSON encodes it with exactly the seed's keys.
type Envelope struct {
	Status      string         `json:"status"`
	OperationID string         `json:"operation_id"`
	FinalURL    string         `json:"final_url"`
	CapturedAt  string         `json:"captured_at"`
	Locator     map[string]any `json:"locator"`
	Digest      string         `json:"digest"`
	Truncated   bool           `json:"truncated"`
	Data        any            `json:"data"`
	Error       *ErrorBody     `json:"error,omitempty"`
}

// ErrorBody is an envelope's error.
type ErrorBody struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
}

// OK reports whether the envelope carries data (ok or truncated). It makes
// no claim that the data is true.
func (e *Envelope) OK() bool { return e.Status == StatusOK || e.Status == StatusTruncated }

// provenance is where an answer's data came from, before redaction.
type provenance struct {
	requested string
	final     string
	redirects []string
	captured  time.Time
	// usage is the provider's model and token counts, when it said.
	usage map[string]any
}

// seal builds an ok or truncated envelope: data is cut to limit bytes of
// canonical JSON, and the digest is that of the data returned.
func seal(opID string, p provenance, data any, limit int) (*Envelope, int, error) {
	data, truncated, size, err := truncate(data, limit)
	if err != nil {
		return nil, 0, err
	}
	digest, err := Digest(data)
	if err != nil {
		return nil, 0, err
	}
	status := StatusOK
	if truncated {
		status = StatusTruncated
	}
	return &Envelope{
		Status: status, OperationID: opID, FinalURL: RedactURL(p.final),
		CapturedAt: p.captured.UTC().Format(time.RFC3339Nano),
		Locator:    locator(p), Digest: digest, Truncated: truncated, Data: data,
	}, size, nil
}

// failed builds an error envelope. Its data is null and its digest that of
// null, so that every envelope has one.
func failed(opID string, p provenance, err *Error) *Envelope {
	digest, _ := Digest(nil)
	captured := p.captured
	if captured.IsZero() {
		captured = time.Now()
	}
	return &Envelope{
		Status: StatusError, OperationID: opID, FinalURL: RedactURL(p.final),
		CapturedAt: captured.UTC().Format(time.RFC3339Nano),
		Locator:    locator(p), Digest: digest, Data: nil,
		Error: &ErrorBody{Code: err.Code, Message: err.Message},
	}
}

// Refuse is an error envelope for a call refused before it reached the
// engine (arguments a door could not decode).
func Refuse(code Code, message string) *Envelope {
	return failed(newID(), provenance{}, &Error{Code: code, Message: message})
}

func locator(p provenance) map[string]any {
	l := map[string]any{}
	if p.requested != "" {
		l["url"] = RedactURL(p.requested)
	}
	if p.usage != nil {
		l["provider_usage"] = p.usage
	}
	if len(p.redirects) > 0 {
		rs := make([]any, len(p.redirects))
		for i, r := range p.redirects {
			rs[i] = RedactURL(r)
		}
		l["redirects"] = rs
	}
	return l
}

// truncate returns data cut so that its canonical JSON takes at most limit
// bytes, whether it was cut, and the size kept. A string keeps its longest
// prefix that fits, an array its longest prefix of items; anything else,
// and an array none of whose items fits, becomes a string preview of its
// canonical JSON. A limit too small for any preview leaves "" (two bytes,
// even under a limit of one): truncated, not the type, says what happened.
func truncate(data any, limit int) (any, bool, int, error) {
	c, err := Canonical(data)
	if err != nil {
		return nil, false, 0, err
	}
	if len(c) <= limit {
		return data, false, len(c), nil
	}
	if arr, ok := data.([]any); ok {
		// Grow the prefix while it fits: "[" + items + "]".
		size, kept := 2, 0
		for _, item := range arr {
			ic, err := Canonical(item)
			if err != nil {
				return nil, false, 0, err
			}
			add := len(ic)
			if kept > 0 {
				add++
			}
			if size+add > limit {
				break
			}
			size += add
			kept++
		}
		if kept > 0 {
			return arr[:kept], true, size, nil
		}
	}
	s, ok := data.(string)
	if !ok {
		s = string(c)
	}
	cut := fitString(s, limit)
	n, _ := Canonical(cut)
	return cut, true, len(n), nil
}

// fitString returns the longest prefix of s, cut at a character boundary,
// whose canonical JSON takes at most limit bytes.
func fitString(s string, limit int) string {
	var b bytes.Buffer
	size := 2 // the quotes
	end := 0
	for i, r := range s {
		b.Reset()
		_ = canonString(&b, string(r))
		w := b.Len() - 2
		if size+w > limit {
			break
		}
		size += w
		end = i + utf8.RuneLen(r)
	}
	return s[:end]
}

// JSON is the envelope as JSON text, as an MCP tool returns it.
func (e *Envelope) JSON() ([]byte, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("envelope: %w", err)
	}
	return b, nil
}

// cleanupPending supersedes env: the call's durable record could not be
// closed, so what it did waits for the host's review, whatever it
// returned.
func cleanupPending(env *Envelope) *Envelope {
	digest, _ := Digest(nil)
	out := *env
	out.Status, out.Data, out.Digest, out.Truncated = StatusCleanupPending, nil, digest, false
	out.Error = &ErrorBody{Code: CleanupPending, Message: "the call's operation could not be closed; the host must review it"}
	return &out
}
