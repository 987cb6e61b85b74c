// Package telemetrytest receives the spans distill processes export, so a
// test can check that a request's trace holds together across processes.
//
// Point a process at a Receiver through its environment, Receiver.Env:
//
//	OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:PORT
//	OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf
//	OTEL_BSP_SCHEDULE_DELAY=50
//
// The last is how many milliseconds the SDK batches spans before sending
// them (5000 by default): low, so a test need not wait. A process that
// runs telemetry.Setup's shutdown on exit (on SIGTERM, say) flushes the
// rest at once; one that is killed loses what it had not sent.
package telemetrytest

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Span is one received span.
type Span struct {
	TraceID string
	SpanID  string
	// ParentSpanID is "" for a span that started its trace.
	ParentSpanID string
	Name         string
	// Service is the service.name of the process that sent it.
	Service    string
	Attributes map[string]string
	// Links are the span IDs of the spans it links to.
	Links []string
}

func (s Span) String() string {
	return fmt.Sprintf("%s (%s, span %s)", s.Name, s.Service, s.SpanID)
}

// Receiver is an OTLP/HTTP trace receiver on a loopback port.
type Receiver struct {
	// URL is the OTLP endpoint to export to, http://127.0.0.1:PORT.
	URL string

	srv     *http.Server
	done    chan struct{}
	mu      sync.Mutex
	spans   []Span
	arrived chan struct{} // closed and replaced whenever spans arrive
}

// Start starts a Receiver. Close stops it.
func Start() (*Receiver, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("telemetrytest: listen: %w", err)
	}
	r := &Receiver{URL: "http://" + lis.Addr().String(), done: make(chan struct{}), arrived: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", r.receive)
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(r.done)
		_ = r.srv.Serve(lis)
	}()
	return r, nil
}

// Close stops the receiver.
func (r *Receiver) Close() {
	_ = r.srv.Close()
	<-r.done
}

// Env is the environment that makes a process export its spans here,
// promptly, as KEY=value strings for exec.Cmd.Env.
func (r *Receiver) Env() []string {
	return []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + r.URL,
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_TRACES_EXPORTER=otlp",
		"OTEL_BSP_SCHEDULE_DELAY=50",
	}
}

// Spans returns the spans received so far, in order of arrival.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.spans)
}

// Wait returns the spans received once done says they are enough, or an
// error naming what had arrived when ctx ends.
func (r *Receiver) Wait(ctx context.Context, done func([]Span) bool) ([]Span, error) {
	for {
		r.mu.Lock()
		spans, arrived := slices.Clone(r.spans), r.arrived
		r.mu.Unlock()
		if done(spans) {
			return spans, nil
		}
		select {
		case <-arrived:
		case <-ctx.Done():
			return spans, fmt.Errorf("telemetrytest: %w waiting for spans; %d arrived: %v", ctx.Err(), len(spans), spans)
		}
	}
}

func (r *Receiver) receive(w http.ResponseWriter, req *http.Request) {
	body := io.Reader(req.Body)
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		defer zr.Close()
		body = zr
	}
	data, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	export := &coltracepb.ExportTraceServiceRequest{}
	if strings.HasPrefix(req.Header.Get("Content-Type"), "application/json") {
		err = protojson.Unmarshal(data, export)
	} else {
		err = proto.Unmarshal(data, export)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.add(spansOf(export))
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (r *Receiver) add(spans []Span) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spans = append(r.spans, spans...)
	close(r.arrived)
	r.arrived = make(chan struct{})
}

func spansOf(export *coltracepb.ExportTraceServiceRequest) []Span {
	var out []Span
	for _, rs := range export.GetResourceSpans() {
		service := attributes(rs.GetResource().GetAttributes())["service.name"]
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				var links []string
				for _, l := range s.GetLinks() {
					links = append(links, hex.EncodeToString(l.GetSpanId()))
				}
				out = append(out, Span{
					TraceID:      hex.EncodeToString(s.GetTraceId()),
					SpanID:       hex.EncodeToString(s.GetSpanId()),
					ParentSpanID: hex.EncodeToString(s.GetParentSpanId()),
					Name:         s.GetName(),
					Service:      service,
					Attributes:   attributes(s.GetAttributes()),
					Links:        links,
				})
			}
		}
	}
	return out
}

// attributes flattens attribute values to strings, as fmt prints them.
func attributes(kvs []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		var v any
		switch x := kv.GetValue().GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			v = x.StringValue
		case *commonpb.AnyValue_IntValue:
			v = x.IntValue
		case *commonpb.AnyValue_BoolValue:
			v = x.BoolValue
		case *commonpb.AnyValue_DoubleValue:
			v = x.DoubleValue
		default:
			v = kv.GetValue().String()
		}
		m[kv.GetKey()] = fmt.Sprint(v)
	}
	return m
}

// Connected checks that spans are one trace whose spans all descend from
// one root: they share a trace ID, and every span's parent is among them
// but for the root's. The root may have a parent elsewhere, a process that
// exports nothing. The error names the spans that do not fit.
func Connected(spans []Span) error {
	if len(spans) == 0 {
		return errors.New("no spans")
	}
	traces := map[string][]Span{}
	byID := map[string]Span{}
	for _, s := range spans {
		traces[s.TraceID] = append(traces[s.TraceID], s)
		if prev, dup := byID[s.SpanID]; dup {
			return fmt.Errorf("span id %s appears twice: %v and %v", s.SpanID, prev, s)
		}
		byID[s.SpanID] = s
	}
	if len(traces) > 1 {
		var parts []string
		for id, ss := range traces {
			parts = append(parts, fmt.Sprintf("trace %s: %v", id, ss))
		}
		slices.Sort(parts)
		return fmt.Errorf("spans belong to %d traces, want 1:\n%s", len(traces), strings.Join(parts, "\n"))
	}
	var roots []string
	for _, s := range spans {
		if _, ok := byID[s.ParentSpanID]; !ok {
			roots = append(roots, fmt.Sprintf("%v, parent %q", s, s.ParentSpanID))
		}
	}
	if len(roots) != 1 {
		return fmt.Errorf("%d spans have no parent among the spans, want only the root:\n%s", len(roots), strings.Join(roots, "\n"))
	}
	return nil
}
