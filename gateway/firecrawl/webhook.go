package firecrawl

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"distill.dev/services/platform/netpolicy"
)

// Webhook delivery: each attempt gets webhookTimeout, and a failed one
// (no answer, or not 2xx) is tried again after 1 s, then 2 s.
const (
	webhookAttempts = 3
	webhookTimeout  = 10 * time.Second
	// SignatureHeader carries the HMAC-SHA256 of the body, keyed by the
	// operator's webhook secret, as "sha256=<hex>": Firecrawl's header.
	SignatureHeader = "X-Firecrawl-Signature"
)

// webhookConfig is a request's webhook: a URL, or an object.
type webhookConfig struct {
	URL      string            `json:"url"`
	Headers  map[string]string `json:"headers"`
	Metadata map[string]any    `json:"metadata"`
	Events   []string          `json:"events"`
}

// webhookEvents are the events a webhook may ask for.
var webhookEvents = []string{"started", "page", "completed", "failed"}

// parseWebhook reads raw, a URL or {url, headers, metadata, events}, and
// checks its URL against the network policy before any job starts.
func (s *Server) parseWebhook(raw json.RawMessage) (*webhookConfig, *apiError) {
	if isNull(raw) {
		return nil, nil
	}
	if s.cfg.WebhookSecret == "" {
		return nil, notSupported("webhook", "this server signs webhooks with a secret its operator has not set (DISTILL_WEBHOOK_SECRET)")
	}
	var w webhookConfig
	if json.Unmarshal(raw, &w.URL) != nil {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&w); err != nil {
			return nil, badRequest("webhook: %s", jsonMessage(err))
		}
	}
	for _, e := range w.Events {
		if !slices.Contains(webhookEvents, e) {
			return nil, badRequest("webhook: unknown event %q (want %s)", e, strings.Join(webhookEvents, ", "))
		}
	}
	if len(w.Events) == 0 {
		w.Events = webhookEvents
	}
	if _, err := s.webhookPolicy().CheckURL(w.URL); err != nil {
		return nil, &apiError{status: http.StatusBadRequest, code: "BLOCKED", msg: "webhook: " + err.Error()}
	}
	return &w, nil
}

func (s *Server) webhookPolicy() netpolicy.Policy {
	return netpolicy.Policy{AllowLoopback: s.cfg.AllowLocal, Own: s.cfg.Own}
}

// webhookClient posts under the network policy, checked at connect time
// on the address dialled, and follows no redirect.
func (s *Server) webhookClient() *http.Client {
	dialer := &net.Dialer{Timeout: webhookTimeout, Control: s.webhookPolicy().Control}
	return &http.Client{
		Transport: &http.Transport{Proxy: nil, DialContext: dialer.DialContext, MaxIdleConns: 4, IdleConnTimeout: 30 * time.Second},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// webhookEvent is one delivery's body, in Firecrawl's shape.
type webhookEvent struct {
	Success bool   `json:"success"`
	Type    string `json:"type"`
	ID      string `json:"id"`
	// Data is a batch's or a crawl's documents, an extract's data.
	Data     []any          `json:"data"`
	Metadata map[string]any `json:"metadata,omitempty"`
	Error    string         `json:"error,omitempty"`
}

// webhookSender delivers one job's events in order, from one goroutine,
// so that started comes before the pages and completed after them.
type webhookSender struct {
	logger *slog.Logger
	client *http.Client
	secret []byte
	hook   *webhookConfig
	// kind prefixes the event types: batch_scrape.page, crawl.page.
	kind  string
	queue chan webhookEvent
	done  chan struct{}
}

func (s *Server) newWebhookSender(hook *webhookConfig, kind string) *webhookSender {
	w := &webhookSender{
		logger: s.logger, client: s.webhookClient(), secret: []byte(s.cfg.WebhookSecret), hook: hook, kind: kind,
		queue: make(chan webhookEvent, 64), done: make(chan struct{}),
	}
	go w.run()
	return w
}

// send queues event (<kind>.<event>) when the webhook asked for it.
func (w *webhookSender) send(event string, e webhookEvent) {
	if w == nil || !slices.Contains(w.hook.Events, event) {
		return
	}
	e.Type, e.Metadata = w.kind+"."+event, w.hook.Metadata
	if e.Data == nil {
		e.Data = []any{}
	}
	w.queue <- e
}

// close delivers what is queued and returns when it is done.
func (w *webhookSender) close() {
	if w == nil {
		return
	}
	close(w.queue)
	<-w.done
}

func (w *webhookSender) run() {
	defer close(w.done)
	for e := range w.queue {
		body, err := json.Marshal(e)
		if err != nil {
			w.logger.Warn("webhook", "id", e.ID, "err", err)
			continue
		}
		if err := w.deliver(body); err != nil {
			w.logger.Warn("webhook not delivered", "id", e.ID, "type", e.Type, "url", w.hook.URL, "err", err)
		}
	}
}

// deliver posts body, signed, trying again on failure.
func (w *webhookSender) deliver(body []byte) error {
	mac := hmac.New(sha256.New, w.secret)
	mac.Write(body)
	signature := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	var errs []error
	for attempt := range webhookAttempts {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * time.Second)
		}
		err := w.post(body, signature)
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Errorf("attempt %d: %w", attempt+1, err))
		if errors.Is(err, netpolicy.ErrBlocked) {
			break
		}
	}
	return errors.Join(errs...)
}

func (w *webhookSender) post(body []byte, signature string) error {
	ctx, cancel := context.WithTimeout(context.Background(), webhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.hook.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, v := range w.hook.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SignatureHeader, signature)
	res, err := w.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return fmt.Errorf("answered %s", res.Status)
	}
	return nil
}
