// Package fetchopts gives distillv1.FetchOptions their defaults and checks
// their ranges. Every service reads options through it, so a default is
// written once.
package fetchopts

import (
	"fmt"
	"slices"
	"strings"
	"time"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// Defaults of the public surface.
const (
	DefaultTimeoutSecs        = 20
	DefaultMaxBytes           = 8 << 20
	DefaultCacheTTLSecs       = 3600
	DefaultMaxRetries         = 2
	DefaultPerHostConcurrency = 4
	DefaultConcurrency        = 8
	// DefaultMCPMaxOutputTokens is the MCP tools' output budget; the CLI has
	// none unless asked.
	DefaultMCPMaxOutputTokens = 20000
)

// Limits beyond which an option is refused rather than obeyed.
const (
	MaxTimeoutSecs  = 600
	MaxConcurrency  = 256
	MaxRetriesLimit = 10
	// MaxBytesLimit keeps a body within what one message between
	// services carries.
	MaxBytesLimit = 64 << 20
	// MinChunk is the smallest chunk size: below it a reopened code fence
	// or a repeated table header leaves no room for content.
	MinChunk = 16
	// MaxQueryBytes bounds a query; a question is a sentence, not a page.
	MaxQueryBytes = 1024
)

// Format returns the output format, markdown by default.
func Format(o *distillv1.FetchOptions) distillv1.Format {
	if f := o.GetFormat(); f != distillv1.Format_FORMAT_UNSPECIFIED {
		return f
	}
	return distillv1.Format_FORMAT_MARKDOWN
}

// Profile returns the content profile, article by default.
func Profile(o *distillv1.FetchOptions) distillv1.Profile {
	if p := o.GetProfile(); p != distillv1.Profile_PROFILE_UNSPECIFIED {
		return p
	}
	return distillv1.Profile_PROFILE_ARTICLE
}

// JS returns the rendering mode, auto by default.
func JS(o *distillv1.FetchOptions) distillv1.JsMode {
	if m := o.GetJs(); m != distillv1.JsMode_JS_MODE_UNSPECIFIED {
		return m
	}
	if len(o.GetHeaders()) > 0 {
		// The page is read as fetched with the caller's headers: a
		// browser would load it again without them.
		return distillv1.JsMode_JS_MODE_OFF
	}
	return distillv1.JsMode_JS_MODE_AUTO
}

// Timeout returns the per-request timeout.
func Timeout(o *distillv1.FetchOptions) time.Duration {
	secs := int32(DefaultTimeoutSecs)
	if o != nil && o.TimeoutSecs != nil {
		secs = o.GetTimeoutSecs()
	}
	return time.Duration(secs) * time.Second
}

// MaxBytes returns the cap on a decoded body.
func MaxBytes(o *distillv1.FetchOptions) int64 {
	if o != nil && o.MaxBytes != nil {
		return o.GetMaxBytes()
	}
	return DefaultMaxBytes
}

// CacheTTL returns the cache freshness window.
func CacheTTL(o *distillv1.FetchOptions) time.Duration {
	secs := int64(DefaultCacheTTLSecs)
	if o != nil && o.CacheTtl != nil {
		secs = o.GetCacheTtl()
	}
	return time.Duration(secs) * time.Second
}

// MaxRetries returns how many times a transient failure is retried.
func MaxRetries(o *distillv1.FetchOptions) int {
	if o != nil && o.MaxRetries != nil {
		return int(o.GetMaxRetries())
	}
	return DefaultMaxRetries
}

// PerHostConcurrency returns the cap on simultaneous requests to one host;
// 0 means unlimited.
func PerHostConcurrency(o *distillv1.FetchOptions) int {
	if o != nil && o.PerHostConcurrency != nil {
		return int(o.GetPerHostConcurrency())
	}
	return DefaultPerHostConcurrency
}

// Concurrency returns the cap on concurrent requests of a batch.
func Concurrency(o *distillv1.FetchOptions) int {
	if o.GetConcurrency() > 0 {
		return int(o.GetConcurrency())
	}
	return DefaultConcurrency
}

// MaxOutputTokens returns the output budget in tokens; 0 means unlimited.
func MaxOutputTokens(o *distillv1.FetchOptions) int64 {
	return o.GetMaxOutputTokens()
}

// JSWait returns the headless wait budget; 0 means none was given.
func JSWait(o *distillv1.FetchOptions) time.Duration {
	return time.Duration(o.GetJsWait()) * time.Millisecond
}

// Validate reports the first option that is out of range, naming it as the
// CLI flag does.
func Validate(o *distillv1.FetchOptions) error {
	if o == nil {
		return nil
	}
	switch {
	case o.TimeoutSecs != nil && (o.GetTimeoutSecs() <= 0 || o.GetTimeoutSecs() > MaxTimeoutSecs):
		return fmt.Errorf("--timeout must be between 1 and %d seconds, got %d", MaxTimeoutSecs, o.GetTimeoutSecs())
	case o.MaxBytes != nil && (o.GetMaxBytes() <= 0 || o.GetMaxBytes() > MaxBytesLimit):
		return fmt.Errorf("--max-bytes must be between 1 and %d, got %d", MaxBytesLimit, o.GetMaxBytes())
	case o.CacheTtl != nil && o.GetCacheTtl() < 0:
		return fmt.Errorf("--cache-ttl must not be negative, got %d", o.GetCacheTtl())
	case o.MaxRetries != nil && (o.GetMaxRetries() < 0 || o.GetMaxRetries() > MaxRetriesLimit):
		return fmt.Errorf("--max-retries must be between 0 and %d, got %d", MaxRetriesLimit, o.GetMaxRetries())
	case o.PerHostConcurrency != nil && o.GetPerHostConcurrency() < 0:
		return fmt.Errorf("--per-host-concurrency must not be negative, got %d", o.GetPerHostConcurrency())
	case o.Concurrency != nil && (o.GetConcurrency() <= 0 || o.GetConcurrency() > MaxConcurrency):
		return fmt.Errorf("--concurrency must be between 1 and %d, got %d", MaxConcurrency, o.GetConcurrency())
	case o.GetRateLimit() < 0:
		return fmt.Errorf("--rate-limit must not be negative, got %g", o.GetRateLimit())
	case o.MaxOutputTokens != nil && o.GetMaxOutputTokens() < 0:
		return fmt.Errorf("--max-output-tokens must not be negative, got %d", o.GetMaxOutputTokens())
	case o.MaxActions != nil && o.GetMaxActions() < 0:
		return fmt.Errorf("--max-actions must not be negative, got %d", o.GetMaxActions())
	case o.JsWait != nil && o.GetJsWait() < 0:
		return fmt.Errorf("--js-wait must not be negative, got %d", o.GetJsWait())
	}
	if err := validateBrowser(o); err != nil {
		return err
	}
	if err := validateProfile(o); err != nil {
		return err
	}
	if err := validateHeaders(o); err != nil {
		return err
	}
	return validateReading(o)
}

// BrowserProfiles are the names FetchOptions.browser takes: the identities
// the fetcher presents on plain HTTP (services/fetcher/identity, whose
// tests hold its profiles to this list), "distill" first, the default.
func BrowserProfiles() []string { return []string{"distill", "chrome"} }

// validateProfile refuses a browser profile the fetcher does not have,
// before anything is fetched: a crawl would otherwise fail page by page.
func validateProfile(o *distillv1.FetchOptions) error {
	b := o.GetBrowser()
	if b == "" || slices.Contains(BrowserProfiles(), strings.ToLower(b)) {
		return nil
	}
	return fmt.Errorf("--browser has no profile %q: one of %s", b, strings.Join(BrowserProfiles(), ", "))
}

// validateReading checks the reading options (query, chunks, citations)
// and the formats they go with.
func validateReading(o *distillv1.FetchOptions) error {
	format := Format(o)
	switch {
	case len(o.GetQuery()) > MaxQueryBytes:
		return fmt.Errorf("--query must be at most %d bytes, got %d", MaxQueryBytes, len(o.GetQuery()))
	case o.GetChunk() < 0 || o.GetChunk() > 0 && o.GetChunk() < MinChunk:
		return fmt.Errorf("--chunk must be 0 (none) or at least %d tokens, got %d", MinChunk, o.GetChunk())
	case o.GetChunkOverlap() < 0:
		return fmt.Errorf("--chunk-overlap must not be negative, got %d", o.GetChunkOverlap())
	case o.GetChunkOverlap() > 0 && o.GetChunk() == 0:
		return fmt.Errorf("--chunk-overlap needs --chunk")
	case o.GetChunkOverlap()*2 > o.GetChunk():
		return fmt.Errorf("--chunk-overlap must be at most half of --chunk (%d), got %d", o.GetChunk()/2, o.GetChunkOverlap())
	case o.GetQuery() != "" && (format == distillv1.Format_FORMAT_TEXT || format == distillv1.Format_FORMAT_HTML):
		return fmt.Errorf("--query keeps Markdown blocks: use it with --format markdown, json or llm")
	case o.GetCitations() && (format == distillv1.Format_FORMAT_TEXT || format == distillv1.Format_FORMAT_HTML):
		return fmt.Errorf("--citations needs Markdown: --format markdown, json or llm (llm cites links always)")
	}
	return nil
}
