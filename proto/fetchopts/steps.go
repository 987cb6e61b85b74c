package fetchopts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// Limits of the browser work a request may ask for.
const (
	// MaxSteps caps a request's step list.
	MaxSteps = 50
	// MaxStepsJSON caps the step list's JSON, scripts included.
	MaxStepsJSON = 256 << 10
	// MaxClickRepeat caps one click step's repeat.
	MaxClickRepeat = 100
	// MaxWaitMillis caps one wait step.
	MaxWaitMillis = 30_000
	// MaxScrollAmount caps one scroll step, in pixels.
	MaxScrollAmount = 100_000
	// DefaultScrolls is how often --scroll scrolls at most when no N is given.
	DefaultScrolls = 20
	// MaxScrolls caps --scroll=N.
	MaxScrolls = 200
)

// Step types, in Firecrawl's spelling.
const (
	StepClick             = "click"
	StepType              = "type"
	StepPress             = "press"
	StepScroll            = "scroll"
	StepWait              = "wait"
	StepWaitForSelector   = "waitForSelector"
	StepExecuteJavascript = "executeJavascript"
	StepScreenshot        = "screenshot"
)

// keyNames are the keys a press step names; any single character is a key
// too.
var keyNames = []string{"Enter", "Tab", "Escape", "Backspace", "Delete", "Space",
	"ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "PageUp", "PageDown", "Home", "End"}

// KeyNames returns the keys a press step names, a fresh copy each call.
func KeyNames() []string { return slices.Clone(keyNames) }

// stepAliases are Firecrawl's other names for the same steps.
var stepAliases = map[string]string{"write": StepType, "executeJavaScript": StepExecuteJavascript}

var stepTypes = []string{StepClick, StepType, StepPress, StepScroll, StepWait, StepWaitForSelector, StepExecuteJavascript, StepScreenshot}

// Step is one step of --steps, Firecrawl's action object. Type says which
// of the other fields it reads.
type Step struct {
	Type string `json:"type"`
	// Selector is the element a click, type, scroll or waitForSelector is
	// about (a wait with a selector is a waitForSelector).
	Selector string `json:"selector,omitempty"`
	// Value is what type writes; Text is Firecrawl's name for it.
	Value string `json:"value,omitempty"`
	Text  string `json:"text,omitempty"`
	// Key is what press presses: "Enter", "Tab", "a".
	Key string `json:"key,omitempty"`
	// Direction ("down" by default, or "up") and Amount (pixels; a
	// viewport's height when 0) are a scroll's.
	Direction string `json:"direction,omitempty"`
	Amount    int    `json:"amount,omitempty"`
	// Milliseconds is a wait's length, or how long a waitForSelector
	// waits at most.
	Milliseconds int `json:"milliseconds,omitempty"`
	// Script is what executeJavascript runs: an expression or a function
	// body's statements; its value is returned.
	Script string `json:"script,omitempty"`
	// FullPage makes a screenshot step take the whole page.
	FullPage bool `json:"fullPage,omitempty"`
	// Repeat clicks again, up to this many times in all, for as long as
	// the element is there ("load more").
	Repeat int `json:"repeat,omitempty"`
}

// Input is what a type step writes.
func (s Step) Input() string {
	if s.Value != "" {
		return s.Value
	}
	return s.Text
}

// ParseSteps reads --steps. Every step is checked before any runs, so a
// malformed list fails the request before the page is loaded.
func ParseSteps(raw string) ([]Step, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, nil
	}
	if len(raw) > MaxStepsJSON {
		return nil, fmt.Errorf("--steps is %d bytes, over the %d byte limit", len(raw), MaxStepsJSON)
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.DisallowUnknownFields()
	var steps []Step
	if err := dec.Decode(&steps); err != nil {
		return nil, fmt.Errorf("--steps is not a JSON array of steps: %w", err)
	}
	if dec.More() {
		return nil, errors.New("--steps has more than one JSON value")
	}
	if len(steps) > MaxSteps {
		return nil, fmt.Errorf("--steps has %d steps, over the limit of %d", len(steps), MaxSteps)
	}
	for i := range steps {
		s := &steps[i]
		if a, ok := stepAliases[s.Type]; ok {
			s.Type = a
		}
		if s.Type == StepWait && s.Selector != "" {
			s.Type = StepWaitForSelector
		}
		if err := checkStep(*s); err != nil {
			return nil, fmt.Errorf("--steps: step %d (%s): %w", i, s.Type, err)
		}
	}
	return steps, nil
}

func checkStep(s Step) error {
	needs := func(field, v string) error {
		if v == "" {
			return fmt.Errorf("needs a %s", field)
		}
		return nil
	}
	switch s.Type {
	case StepClick:
		if s.Repeat < 0 || s.Repeat > MaxClickRepeat {
			return fmt.Errorf("repeat must be between 0 and %d, got %d", MaxClickRepeat, s.Repeat)
		}
		return needs("selector", s.Selector)
	case StepType:
		if err := needs("selector", s.Selector); err != nil {
			return err
		}
		if s.Input() == "" {
			return errors.New("needs a value")
		}
	case StepPress:
		if err := needs("key", s.Key); err != nil {
			return err
		}
		if len([]rune(s.Key)) != 1 && !slices.Contains(keyNames, s.Key) {
			return fmt.Errorf("key must be one character or one of %s, got %q", strings.Join(keyNames, ", "), s.Key)
		}
	case StepScroll:
		if s.Direction != "" && s.Direction != "down" && s.Direction != "up" {
			return fmt.Errorf("direction must be up or down, got %q", s.Direction)
		}
		if s.Amount < 0 || s.Amount > MaxScrollAmount {
			return fmt.Errorf("amount must be between 0 and %d, got %d", MaxScrollAmount, s.Amount)
		}
	case StepWait:
		if s.Milliseconds <= 0 || s.Milliseconds > MaxWaitMillis {
			return fmt.Errorf("milliseconds must be between 1 and %d, got %d", MaxWaitMillis, s.Milliseconds)
		}
	case StepWaitForSelector:
		if s.Milliseconds < 0 || s.Milliseconds > MaxWaitMillis {
			return fmt.Errorf("milliseconds must be between 0 and %d, got %d", MaxWaitMillis, s.Milliseconds)
		}
		return needs("selector", s.Selector)
	case StepExecuteJavascript:
		return needs("script", s.Script)
	case StepScreenshot:
	case "":
		return errors.New("has no type")
	default:
		return fmt.Errorf("unknown type; one of %s", strings.Join(stepTypes, ", "))
	}
	return nil
}

// Screenshot kinds and formats.
const (
	ScreenshotViewport = "viewport"
	ScreenshotFull     = "full"
	FormatPNG          = "png"
	FormatJPEG         = "jpeg"
)

// ScreenshotFormat returns the screenshot format, png by default.
func ScreenshotFormat(o *distillv1.FetchOptions) string {
	if f := o.GetScreenshotFormat(); f != "" {
		return f
	}
	return FormatPNG
}

// Scrolls returns how many times --scroll scrolls at most; 0 when it was
// not asked for.
func Scrolls(o *distillv1.FetchOptions) int {
	if o == nil || o.Scroll == nil {
		return 0
	}
	if n := o.GetScroll(); n > 0 {
		return int(n)
	}
	return DefaultScrolls
}

// Capturing reports whether network capture was asked for.
func Capturing(o *distillv1.FetchOptions) bool {
	return o != nil && (o.CaptureNetwork != nil || len(o.GetCaptureTypes()) > 0)
}

// CaptureTypes returns the resource types captured: xhr and fetch unless
// others were named.
func CaptureTypes(o *distillv1.FetchOptions) []string {
	if t := o.GetCaptureTypes(); len(t) > 0 {
		return t
	}
	return []string{"xhr", "fetch"}
}

// Kinds --block and --capture-types know.
var (
	blockKinds   = []string{"images", "fonts", "media"}
	captureKinds = []string{"document", "script", "stylesheet", "image", "font", "media", "xhr", "fetch", "websocket", "other"}
)

// Browser reports whether the options ask for work only a browser does,
// which renders the page whatever js says.
func Browser(o *distillv1.FetchOptions) bool {
	if o == nil {
		return false
	}
	return o.GetSteps() != "" || o.Scroll != nil || o.GetScreenshot() != "" || o.GetPdf() || o.GetMhtml() ||
		Capturing(o) || len(o.GetBlock()) > 0
}

// validateBrowser checks the browser options, naming the flag.
func validateBrowser(o *distillv1.FetchOptions) error {
	if _, err := ParseSteps(o.GetSteps()); err != nil {
		return err
	}
	if o.Scroll != nil && (o.GetScroll() < 0 || o.GetScroll() > MaxScrolls) {
		return fmt.Errorf("--scroll must be between 1 and %d, got %d", MaxScrolls, o.GetScroll())
	}
	if s := o.GetScreenshot(); s != "" && s != ScreenshotViewport && s != ScreenshotFull {
		return fmt.Errorf("--screenshot must be viewport or full, got %q", s)
	}
	if f := o.GetScreenshotFormat(); f != "" && f != FormatPNG && f != FormatJPEG {
		return fmt.Errorf("--screenshot-format must be png or jpeg, got %q", f)
	}
	if o.CaptureNetwork != nil {
		if _, err := regexp.Compile(o.GetCaptureNetwork()); err != nil {
			return fmt.Errorf("--capture-network is not a regular expression: %w", err)
		}
	}
	for _, t := range o.GetCaptureTypes() {
		if !slices.Contains(captureKinds, t) {
			return fmt.Errorf("--capture-types: unknown type %q; one of %s", t, strings.Join(captureKinds, ", "))
		}
	}
	for _, b := range o.GetBlock() {
		if !slices.Contains(blockKinds, b) {
			return fmt.Errorf("--block: unknown kind %q; one of %s", b, strings.Join(blockKinds, ", "))
		}
	}
	if Browser(o) && o.GetJs() == distillv1.JsMode_JS_MODE_OFF {
		return errors.New("--js off leaves no browser for --steps, --scroll, --screenshot, --pdf, --mhtml, --capture-network or --block")
	}
	return nil
}

// StepsBudget is the time the steps, --scroll and the pictures and
// archives have after the page loaded, on top of its timeout: the timeout
// again. 0 when none was asked for.
func StepsBudget(o *distillv1.FetchOptions) time.Duration {
	if o == nil || (o.GetSteps() == "" && o.Scroll == nil && o.GetScreenshot() == "" && !o.GetPdf() && !o.GetMhtml()) {
		return 0
	}
	return Timeout(o)
}
