package firecrawl

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// Firecrawl's clients watch a crawl or a batch over a WebSocket at its
// status path: the v1 client's CrawlWatcher at /v1/crawl/{id}, the v2
// client's watcher at /v2/crawl/{id} or /v2/batch/scrape/{id}. Neither
// can set a header, so the token comes as the one subprotocol offered.
// The server sends a catchup (the job's status and its documents so
// far), then each document as it completes, then done, or error for a
// job that failed, was cancelled or is unknown. The v1 client reads done
// and error from the close frame's reason, the v2 client from a message.

// watchMessage is one message of a watch.
type watchMessage struct {
	Type  string `json:"type"`
	Data  any    `json:"data,omitempty"`
	Error string `json:"error,omitempty"`
}

// watchWriteTimeout bounds one message's write to a slow watcher.
const watchWriteTimeout = 10 * time.Second

// maxCloseReason is the most a close frame's reason holds (RFC 6455).
const maxCloseReason = 123

// isWebSocket says whether r asks to become a WebSocket.
func isWebSocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// offeredToken is the token a WebSocket client offers as its subprotocol.
func offeredToken(r *http.Request) string {
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for p := range strings.SplitSeq(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				return p
			}
		}
	}
	return ""
}

// statusOrWatch is a job's status, or its watch when the client asks for
// a WebSocket.
func (s *Server) statusOrWatch(w http.ResponseWriter, r *http.Request) {
	if isWebSocket(r) {
		s.watch(w, r)
		return
	}
	s.batchStatus(w, r)
}

// accept makes r a WebSocket, agreeing to the token it offers as its
// subprotocol, as Firecrawl does: a client may fail a handshake that
// agrees to none. It returns nil when it answered r otherwise.
func accept(w http.ResponseWriter, r *http.Request) *websocket.Conn {
	opts := &websocket.AcceptOptions{
		// The token comes in the request, not in a cookie a browser adds
		// on its own: a page of another origin gains nothing it did not
		// already hold, so the origin is not checked.
		InsecureSkipVerify: true,
	}
	if t := offeredToken(r); t != "" {
		opts.Subprotocols = []string{t}
	}
	conn, err := websocket.Accept(w, r, opts)
	if err != nil {
		return nil
	}
	return conn
}

// end sends a watch's last message and closes it: in the close frame's
// reason for the v1 client, which reads it there, else as a message.
func end(ctx context.Context, conn *websocket.Conn, v1 bool, code websocket.StatusCode, m watchMessage) {
	if v1 {
		b, _ := json.Marshal(m)
		if len(b) > maxCloseReason {
			m.Error = m.Error[:max(0, len(m.Error)-(len(b)-maxCloseReason))]
			b, _ = json.Marshal(m)
		}
		_ = conn.Close(code, string(b))
		return
	}
	if send(ctx, conn, m) == nil {
		_ = conn.Close(websocket.StatusNormalClosure, "")
	}
}

// refuseWatch answers a watch whose token this server does not take. The
// socket opens only to say so and close: a refused handshake's status
// reaches no WebSocket client, and the v2 client on Node 20 loops on one
// until its stack overflows.
func refuseWatch(w http.ResponseWriter, r *http.Request, msg string) {
	conn := accept(w, r)
	if conn == nil {
		return
	}
	defer conn.CloseNow()
	end(r.Context(), conn, strings.HasPrefix(r.URL.Path, "/v1/"), websocket.StatusPolicyViolation, watchMessage{Type: "error", Error: msg})
}

func (s *Server) watch(w http.ResponseWriter, r *http.Request) {
	conn := accept(w, r)
	if conn == nil {
		return
	}
	defer conn.CloseNow()
	// The watcher sends nothing; reading ends ctx when it goes away.
	ctx := conn.CloseRead(r.Context())
	v1 := strings.HasPrefix(r.URL.Path, "/v1/")
	id, rec, aerr := s.scrapeJob(r)
	if aerr == nil && rec == nil {
		aerr = &apiError{msg: "Job not found"}
	}
	var changes <-chan jobRecord
	if aerr == nil {
		// The job's record changes as it delivers each page and as it
		// ends, on whichever gateway runs it.
		var err error
		if changes, err = s.jobs.watch(ctx, id); err != nil {
			aerr = fromFailure(err)
		}
	}
	if aerr != nil {
		end(ctx, conn, v1, websocket.StatusPolicyViolation, watchMessage{Type: "error", Error: aerr.msg})
		return
	}
	var after uint64
	catchup := true
	for {
		var ok bool
		select {
		case *rec, ok = <-changes:
			if !ok {
				return
			}
		case <-ctx.Done():
			return
		}
		items, last, err := s.jobs.items(ctx, id, after)
		if err != nil {
			end(ctx, conn, v1, websocket.StatusInternalError, watchMessage{Type: "error", Error: fromFailure(err).msg})
			return
		}
		after = last
		if !s.watchStep(ctx, conn, v1, rec, docs(items, rec.Kind), &catchup) {
			return
		}
	}
}

// watchStep sends a watcher what job rec delivered since (docs), and
// ends the watch once the job ended, saying whether it goes on.
func (s *Server) watchStep(ctx context.Context, conn *websocket.Conn, v1 bool, rec *jobRecord, docs []json.RawMessage, catchup *bool) bool {
	completed, total := rec.Succeeded, s.jobTotal(ctx, rec)
	switch {
	case *catchup && (rec.Status == stateScraping || rec.Status == stateCompleted):
		// What the job holds so far, as its status says it.
		*catchup = false
		snap := batchStatusResponse{Success: true, Status: rec.Status, Total: total, Completed: completed, CreditsUsed: completed,
			ExpiresAt: rec.Expires.UTC().Format(time.RFC3339), Data: docs}
		if send(ctx, conn, watchMessage{Type: "catchup", Data: snap}) != nil {
			return false
		}
	default:
		*catchup = false
		for _, d := range docs {
			if send(ctx, conn, watchMessage{Type: "document", Data: d}) != nil {
				return false
			}
		}
	}
	switch rec.Status {
	case stateCompleted:
		end(ctx, conn, v1, websocket.StatusNormalClosure, watchMessage{Type: "done", Data: map[string]any{
			"status": rec.Status, "total": total, "completed": completed, "creditsUsed": completed, "data": []any{},
		}})
		return false
	case stateCancelled:
		end(ctx, conn, v1, websocket.StatusNormalClosure, watchMessage{Type: "error", Error: "the job was cancelled"})
		return false
	case stateFailed:
		end(ctx, conn, v1, websocket.StatusInternalError, watchMessage{Type: "error", Error: "the job failed: " + rec.Failure})
		return false
	}
	return true
}

// send writes one message as JSON text.
func send(ctx context.Context, conn *websocket.Conn, m watchMessage) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, watchWriteTimeout)
	defer cancel()
	return conn.Write(wctx, websocket.MessageText, b)
}
