package fetchopts

import (
	"strings"
	"testing"
	"time"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

func TestDefaultsOfUnsetOptions(t *testing.T) {
	for name, o := range map[string]*distillv1.FetchOptions{"nil": nil, "empty": {}} {
		t.Run(name, func(t *testing.T) {
			if got := Timeout(o); got != 20*time.Second {
				t.Errorf("Timeout = %v", got)
			}
			if got := MaxBytes(o); got != 8388608 {
				t.Errorf("MaxBytes = %d", got)
			}
			if got := CacheTTL(o); got != time.Hour {
				t.Errorf("CacheTTL = %v", got)
			}
			if got := MaxRetries(o); got != 2 {
				t.Errorf("MaxRetries = %d", got)
			}
			if got := PerHostConcurrency(o); got != 4 {
				t.Errorf("PerHostConcurrency = %d", got)
			}
			if got := Concurrency(o); got != 8 {
				t.Errorf("Concurrency = %d", got)
			}
			if got := Format(o); got != distillv1.Format_FORMAT_MARKDOWN {
				t.Errorf("Format = %v", got)
			}
			if got := Profile(o); got != distillv1.Profile_PROFILE_ARTICLE {
				t.Errorf("Profile = %v", got)
			}
			if got := JS(o); got != distillv1.JsMode_JS_MODE_AUTO {
				t.Errorf("JS = %v", got)
			}
			if got := MaxOutputTokens(o); got != 0 {
				t.Errorf("MaxOutputTokens = %d", got)
			}
			if err := Validate(o); err != nil {
				t.Errorf("Validate = %v", err)
			}
		})
	}
}

func TestExplicitZeroIsNotTheDefault(t *testing.T) {
	zero32, zero64 := int32(0), int64(0)
	o := &distillv1.FetchOptions{MaxRetries: &zero32, PerHostConcurrency: &zero32, CacheTtl: &zero64}
	if got := MaxRetries(o); got != 0 {
		t.Errorf("MaxRetries = %d, want 0", got)
	}
	if got := PerHostConcurrency(o); got != 0 {
		t.Errorf("PerHostConcurrency = %d, want 0 (unlimited)", got)
	}
	if got := CacheTTL(o); got != 0 {
		t.Errorf("CacheTTL = %v, want 0", got)
	}
}

func TestValidateAcceptsReadingOptions(t *testing.T) {
	for _, o := range []*distillv1.FetchOptions{
		{Query: "who began the language?", Chunk: 256, ChunkOverlap: 128},
		{Chunk: 16},
		{Citations: true, Format: distillv1.Format_FORMAT_LLM},
		{Citations: true, Format: distillv1.Format_FORMAT_JSON},
		{Format: distillv1.Format_FORMAT_HTML, Chunk: 64},
	} {
		if err := Validate(o); err != nil {
			t.Errorf("Validate(%v) = %v, want nil", o, err)
		}
	}
}

func TestValidateNamesTheFlag(t *testing.T) {
	i32 := func(v int32) *int32 { return &v }
	i64 := func(v int64) *int64 { return &v }
	tests := []struct {
		name string
		o    *distillv1.FetchOptions
		flag string
	}{
		{"zero timeout", &distillv1.FetchOptions{TimeoutSecs: i32(0)}, "--timeout"},
		{"huge timeout", &distillv1.FetchOptions{TimeoutSecs: i32(100000)}, "--timeout"},
		{"negative max bytes", &distillv1.FetchOptions{MaxBytes: i64(-1)}, "--max-bytes"},
		{"negative retries", &distillv1.FetchOptions{MaxRetries: i32(-1)}, "--max-retries"},
		{"too many retries", &distillv1.FetchOptions{MaxRetries: i32(99)}, "--max-retries"},
		{"zero concurrency", &distillv1.FetchOptions{Concurrency: i32(0)}, "--concurrency"},
		{"negative rate", &distillv1.FetchOptions{RateLimit: -1}, "--rate-limit"},
		{"negative tokens", &distillv1.FetchOptions{MaxOutputTokens: i64(-5)}, "--max-output-tokens"},
		{"negative per host", &distillv1.FetchOptions{PerHostConcurrency: i32(-1)}, "--per-host-concurrency"},
		{"long query", &distillv1.FetchOptions{Query: strings.Repeat("why ", 300)}, "--query"},
		{"tiny chunk", &distillv1.FetchOptions{Chunk: 8}, "--chunk"},
		{"negative chunk", &distillv1.FetchOptions{Chunk: -1}, "--chunk"},
		{"overlap without chunk", &distillv1.FetchOptions{ChunkOverlap: 10}, "--chunk-overlap"},
		{"overlap over half", &distillv1.FetchOptions{Chunk: 100, ChunkOverlap: 51}, "--chunk-overlap"},
		{"citations in text", &distillv1.FetchOptions{Format: distillv1.Format_FORMAT_TEXT, Citations: true}, "--citations"},
		{"query in html", &distillv1.FetchOptions{Format: distillv1.Format_FORMAT_HTML, Query: "price"}, "--query"},
		{"unknown browser profile", &distillv1.FetchOptions{Browser: "netscape"}, "--browser"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.o)
			if err == nil || !strings.HasPrefix(err.Error(), tt.flag+" ") {
				t.Fatalf("Validate = %v, want an error naming %s", err, tt.flag)
			}
		})
	}
}

// The browser options' readers take a nil FetchOptions, as every reader
// here does.
func TestBrowserOptionsOfNil(t *testing.T) {
	if Browser(nil) || Capturing(nil) || StepsBudget(nil) != 0 || Scrolls(nil) != 0 || ScreenshotFormat(nil) != FormatPNG {
		t.Fatal("nil options ask for browser work")
	}
}

func TestValidateBrowserOptions(t *testing.T) {
	i32 := func(v int32) *int32 { return &v }
	str := func(v string) *string { return &v }
	for _, tt := range []struct {
		name string
		o    *distillv1.FetchOptions
		flag string
	}{
		{"not an array", &distillv1.FetchOptions{Steps: `{"type":"click"}`}, "--steps"},
		{"unknown field", &distillv1.FetchOptions{Steps: `[{"type":"click","selector":"a","sleep":1}]`}, "--steps"},
		{"click without selector", &distillv1.FetchOptions{Steps: `[{"type":"click"}]`}, "--steps"},
		{"repeat too high", &distillv1.FetchOptions{Steps: `[{"type":"click","selector":"a","repeat":1000}]`}, "--steps"},
		{"too many steps", &distillv1.FetchOptions{Steps: "[" + strings.Repeat(`{"type":"screenshot"},`, MaxSteps) + `{"type":"screenshot"}]`}, "--steps"},
		{"scroll too far", &distillv1.FetchOptions{Scroll: i32(MaxScrolls + 1)}, "--scroll"},
		{"screenshot kind", &distillv1.FetchOptions{Screenshot: "page"}, "--screenshot"},
		{"screenshot format", &distillv1.FetchOptions{ScreenshotFormat: "gif"}, "--screenshot-format"},
		{"capture regex", &distillv1.FetchOptions{CaptureNetwork: str("(")}, "--capture-network"},
		{"capture type", &distillv1.FetchOptions{CaptureTypes: []string{"beacon"}}, "--capture-types:"},
		{"block kind", &distillv1.FetchOptions{Block: []string{"stylesheets"}}, "--block:"},
		{"js off", &distillv1.FetchOptions{Pdf: true, Js: distillv1.JsMode_JS_MODE_OFF}, "--js"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.o)
			if err == nil || !strings.HasPrefix(err.Error(), tt.flag) {
				t.Fatalf("Validate = %v, want an error naming %s", err, tt.flag)
			}
		})
	}
	steps, err := ParseSteps(`[{"type":"write","selector":"#q","text":"x"},{"type":"wait","selector":"#r"},{"type":"executeJavaScript","script":"1"}]`)
	if err != nil || steps[0].Type != StepType || steps[0].Input() != "x" || steps[1].Type != StepWaitForSelector || steps[2].Type != StepExecuteJavascript {
		t.Fatalf("Firecrawl's names: %v, %v", steps, err)
	}
}
