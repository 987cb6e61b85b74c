package telemetry

import (
	"context"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// Attribute keys distill sets on its spans and metrics.
const (
	Service        = attribute.Key("distill.service")
	Method         = attribute.Key("distill.method")
	Outcome        = attribute.Key("distill.outcome")
	FetchSource    = attribute.Key("distill.fetch.source")
	FromCache      = attribute.Key("distill.fetch.from_cache")
	Redirects      = attribute.Key("distill.fetch.redirects")
	CacheResult    = attribute.Key("distill.cache.result")
	RetryReason    = attribute.Key("distill.retry.reason")
	HostLimit      = attribute.Key("distill.host.limit")
	FallbackReason = attribute.Key("distill.fallback.reason")
	FallbackKept   = attribute.Key("distill.fallback.kept")
	JobState       = attribute.Key("distill.jobs.state")
	BatchID        = attribute.Key("distill.batch.id")
	BatchSize      = attribute.Key("distill.batch.size")
	BatchIndex     = attribute.Key("distill.batch.index")
	JobID          = attribute.Key("distill.job.id")
	Attempt        = attribute.Key("distill.attempt")
)

// OutcomeOK is the outcome of a call that succeeded.
const OutcomeOK = "ok"

// Start starts a span of distill's with the global tracer provider.
func Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	return otel.Tracer(scope).Start(ctx, name, opts...)
}

// End ends span, marked failed with err's code when err is not nil. The
// error's message is left out: it names URLs, query strings and all.
func End(span trace.Span, err error) {
	if err != nil {
		code := OutcomeOf(err)
		span.SetAttributes(semconv.ErrorTypeKey.String(code))
		span.SetStatus(codes.Error, code)
	}
	span.End()
}

// StartRequest starts the span of a distill entry point and returns the
// function that ends it and counts the call in distill.requests.
func StartRequest(ctx context.Context, span, service, method string, attrs ...attribute.KeyValue) (context.Context, func(error)) {
	ctx, s := Start(ctx, span, trace.WithAttributes(attrs...))
	return ctx, func(err error) {
		CountRequest(ctx, service, method, err)
		End(s, err)
	}
}

// OutcomeOf names how a call ended: OutcomeOK, or its error's code by
// codeName (timeout, blocked, ...).
func OutcomeOf(err error) string {
	if err == nil {
		return OutcomeOK
	}
	return codeName(failure.CodeOf(err))
}

// codeName is an error code's name without its enum prefix, in lower case.
func codeName(c distillv1.ErrorCode) string {
	return strings.ToLower(strings.TrimPrefix(c.String(), "ERROR_CODE_"))
}

// URLAttributes describe a URL without what may be secret in it: its user
// info, query and fragment are left out.
func URLAttributes(raw string) []attribute.KeyValue {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil
	}
	safe := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	return []attribute.KeyValue{semconv.URLFull(safe.String()), semconv.ServerAddress(u.Hostname())}
}
