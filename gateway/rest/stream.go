package rest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"connectrpc.com/connect"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// The transcoder serves REST for unary calls only: a server stream over
// REST needs a google.api.HttpBody response, which would hide the
// messages' types from the OpenAPI document and from every client. So the
// streaming calls' REST paths (their annotations) are served here, over
// the Connect stream the transcoder already serves: the request's JSON
// body becomes the stream's one message, sent on through the same
// transcoder and gRPC server (tokens, network policy and operator rules
// unchanged), and each message that comes back is one line of
// newline-delimited JSON, {"result": ...}, as grpc-gateway streams and as
// the OpenAPI document generated from the annotations says. A curl user
// reads each result as it comes. A call refused before its first message
// is answered with the HTTP status and the error body of a unary call; an
// error after it is the last line, {"error": ...}. Server-sent events
// were left out: a browser's EventSource cannot POST a body.

// NDJSON is the content type of a streaming call's REST answer.
const NDJSON = "application/x-ndjson"

// streams are the server-streaming methods, by their REST path.
var streams = map[string]string{
	"POST /api/v1/fetch:batch": "FetchBatch",
	"POST /api/v1/map":         "Map",
	"POST /api/v1/crawls":      "Crawl",
}

// maxFrame bounds one message of a stream read back from the transcoder,
// as a gRPC client bounds what it accepts.
const maxFrame = 64 << 20

// Connect's envelope flags.
const (
	flagCompressed = 0x01
	flagEndStream  = 0x02
)

// streamREST serves method's REST path over next, which serves it over
// the Connect protocol.
func streamREST(next http.Handler, method string) http.Handler {
	path := "/" + distillv1.DistillService_ServiceDesc.ServiceName + "/" + method
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			if mbe, ok := errors.AsType[*http.MaxBytesError](err); ok {
				writeStatus(w, http.StatusRequestEntityTooLarge, connect.CodeInvalidArgument, fmt.Sprintf("request body over the limit of %d bytes", mbe.Limit))
				return
			}
			writeStatus(w, http.StatusBadRequest, connect.CodeInvalidArgument, "read the request body: "+err.Error())
			return
		}
		if len(bytes.TrimSpace(body)) == 0 {
			body = []byte("{}")
		}
		var frame bytes.Buffer
		frame.WriteByte(0)
		_ = binary.Write(&frame, binary.BigEndian, uint32(len(body)))
		frame.Write(body)
		inner, err := http.NewRequestWithContext(r.Context(), http.MethodPost, path, &frame)
		if err != nil {
			writeStatus(w, http.StatusInternalServerError, connect.CodeInternal, err.Error())
			return
		}
		// The caller's headers are the call's metadata (its token among
		// them), as they are for a unary call; what says how the body is
		// framed or encoded is the stream's own.
		for k, v := range r.Header {
			switch lk := strings.ToLower(k); {
			case strings.HasPrefix(lk, "content-"), strings.HasPrefix(lk, "connect-"), strings.HasPrefix(lk, "accept"), lk == "te":
			default:
				inner.Header[k] = v
			}
		}
		inner.Header.Set("Content-Type", "application/connect+json")
		inner.ContentLength = int64(frame.Len())
		inner.RemoteAddr = r.RemoteAddr

		pr, pw := io.Pipe()
		rw := &pipeResponse{header: http.Header{}, pw: pw, status: make(chan int, 1)}
		done := make(chan struct{})
		go func() {
			defer close(done)
			next.ServeHTTP(rw, inner)
			rw.WriteHeader(http.StatusOK)
			_ = pw.Close()
		}()
		defer func() {
			// Unblocks the call when the client went away mid-stream.
			_ = pr.CloseWithError(errors.New("the REST client is gone"))
			<-done
		}()
		if status := <-rw.status; status != http.StatusOK {
			// Refused before the stream began: the transcoder's own answer.
			for k, v := range rw.header {
				w.Header()[k] = v
			}
			w.WriteHeader(status)
			_, _ = io.Copy(w, pr)
			return
		}
		relay(w, bufio.NewReader(pr))
	})
}

// relay turns the Connect stream's frames into lines of JSON on w.
func relay(w http.ResponseWriter, in *bufio.Reader) {
	flusher, _ := w.(http.Flusher)
	started := false
	start := func() {
		if !started {
			started = true
			w.Header().Set("Content-Type", NDJSON)
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusOK)
		}
	}
	for {
		flags, msg, err := readFrame(in)
		if err != nil {
			if !started {
				writeStatus(w, http.StatusBadGateway, connect.CodeInternal, "the stream broke: "+err.Error())
				return
			}
			line, _ := json.Marshal(map[string]any{"error": map[string]any{"code": int(connect.CodeInternal), "message": "the stream broke: " + err.Error()}})
			_, _ = w.Write(append(line, '\n'))
			return
		}
		if flags&flagEndStream != 0 {
			var end struct {
				Error *struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			_ = json.Unmarshal(msg, &end)
			if end.Error == nil {
				start()
				return
			}
			code := codeOf(end.Error.Code)
			if !started {
				writeStatus(w, httpStatus(code), code, end.Error.Message)
				return
			}
			line, _ := json.Marshal(map[string]any{"error": map[string]any{"code": int(code), "message": end.Error.Message}})
			_, _ = w.Write(append(line, '\n'))
			return
		}
		start()
		var line bytes.Buffer
		line.WriteString(`{"result":`)
		line.Write(msg)
		line.WriteString("}\n")
		if _, err := w.Write(line.Bytes()); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
}

// readFrame reads one Connect envelope: its flags and its message.
func readFrame(in *bufio.Reader) (byte, []byte, error) {
	var head [5]byte
	if _, err := io.ReadFull(in, head[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return 0, nil, errors.New("it ended without its end message")
		}
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(head[1:])
	switch {
	case head[0]&flagCompressed != 0:
		return 0, nil, errors.New("a compressed message, which was not asked for")
	case n > maxFrame:
		return 0, nil, fmt.Errorf("a message of %d bytes, over %d", n, maxFrame)
	}
	msg := make([]byte, n)
	if _, err := io.ReadFull(in, msg); err != nil {
		return 0, nil, err
	}
	return head[0], msg, nil
}

// codeOf is the Connect code named s ("invalid_argument").
func codeOf(s string) connect.Code {
	var c connect.Code
	if err := c.UnmarshalText([]byte(s)); err != nil {
		return connect.CodeUnknown
	}
	return c
}

// httpStatus is the HTTP status of an error of code, as the transcoder
// answers a unary call's.
func httpStatus(code connect.Code) int {
	switch code {
	case connect.CodeCanceled:
		return 499
	case connect.CodeInvalidArgument, connect.CodeFailedPrecondition, connect.CodeOutOfRange:
		return http.StatusBadRequest
	case connect.CodeDeadlineExceeded:
		return http.StatusGatewayTimeout
	case connect.CodeNotFound:
		return http.StatusNotFound
	case connect.CodeAlreadyExists, connect.CodeAborted:
		return http.StatusConflict
	case connect.CodePermissionDenied:
		return http.StatusForbidden
	case connect.CodeResourceExhausted:
		return http.StatusTooManyRequests
	case connect.CodeUnimplemented:
		return http.StatusNotImplemented
	case connect.CodeUnavailable:
		return http.StatusServiceUnavailable
	case connect.CodeUnauthenticated:
		return http.StatusUnauthorized
	}
	return http.StatusInternalServerError
}

// writeStatus answers with a google.rpc.Status body, as the transcoder's
// REST errors are.
func writeStatus(w http.ResponseWriter, status int, code connect.Code, msg string) {
	b, _ := json.Marshal(map[string]any{"code": int(code), "message": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// pipeResponse hands what the transcoder writes to the relay as it
// writes it.
type pipeResponse struct {
	header http.Header
	pw     *io.PipeWriter
	status chan int
	wrote  bool
}

func (p *pipeResponse) Header() http.Header { return p.header }

func (p *pipeResponse) WriteHeader(status int) {
	if !p.wrote {
		p.wrote = true
		p.status <- status
	}
}

func (p *pipeResponse) Write(b []byte) (int, error) {
	p.WriteHeader(http.StatusOK)
	return p.pw.Write(b)
}

// Flush is a no-op: each write reaches the relay as it is made.
func (p *pipeResponse) Flush() {}
