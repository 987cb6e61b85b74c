package render

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/input"
	"github.com/go-rod/rod/lib/proto"

	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

const (
	// stepQuiet is how long the network must be quiet after a step before
	// the next one runs; shorter than a load's, since a step's requests are
	// the few its own action caused.
	stepQuiet = 300 * time.Millisecond
	// stepQuietBudget bounds that wait: a page that polls never goes quiet.
	stepQuietBudget = 3 * time.Second
	// elementWait bounds the wait for a step's element to appear.
	elementWait = 10 * time.Second
	// growthWait is how long a scroll waits for the page to grow once its
	// requests are done, for pages that append on a timer.
	growthWait = time.Second
	// MaxJSValueBytes caps what the executeJavascript steps of one render
	// return, all together.
	MaxJSValueBytes = 1 << 20
	// MaxStepShotBytes caps the screenshots the steps of one render take,
	// all together.
	MaxStepShotBytes = 8 << 20
)

// errStepsTimeout is the cause the steps' own deadline carries.
var errStepsTimeout = errors.New("steps timeout")

// errWithheld ends the steps once one of them caused a request that
// withhold_unsafe keeps from being sent.
var errWithheld = errors.New("a step's request was withheld")

// stepRun is the state of one render's steps: what they returned so far
// and what is left of their allowances.
type stepRun struct {
	t        *tab
	target   string
	results  []*distillv1.StepResult
	jsLeft   int
	shotLeft int
	ran      int
}

// runSteps runs the steps and then --scroll in the loaded page, under
// their own deadline. The first step that fails fails the render, named by
// its index, type and selector.
func runSteps(ctx context.Context, t *tab, target string, steps []fetchopts.Step, scrolls int, budget time.Duration) (*stepRun, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, budget, errStepsTimeout)
	defer cancel()
	r := &stepRun{t: t, target: target, jsLeft: MaxJSValueBytes, shotLeft: MaxStepShotBytes}
	for i, s := range steps {
		t.current.Store(&stepRef{index: i, typ: s.Type, selector: s.Selector})
		if err := r.step(ctx, s); err != nil {
			return r, r.fail(ctx, i, s, budget, err)
		}
		r.ran++
	}
	if scrolls > 0 {
		t.current.Store(&stepRef{index: len(steps), typ: "scroll to end"})
		grew, err := r.scrollToEnd(ctx, scrolls)
		r.ran += grew
		if err != nil {
			return r, r.fail(ctx, len(steps), fetchopts.Step{Type: "scroll to end"}, budget, err)
		}
	}
	return r, nil
}

// fail names the failing step. A step that took the page somewhere the
// policy refuses is Blocked whatever the browser said; a step that ran out
// of time is Timeout.
func (r *stepRun) fail(ctx context.Context, i int, s fetchopts.Step, budget time.Duration, err error) error {
	name := fmt.Sprintf("step %d (%s", i, s.Type)
	if s.Selector != "" {
		name += fmt.Sprintf(" %q", s.Selector)
	}
	name += ")"
	// A withheld request fails its navigation too: it comes first.
	if r.t.withheldRequest() != nil {
		return errWithheld
	}
	if left := r.t.left(r.target); left != nil {
		return failure.Wrap(failure.CodeOf(left), left, "%s", name)
	}
	if refused := r.t.refusedNav(); refused != nil {
		return failure.Wrap(failure.Blocked, refused, "%s navigated where the policy refuses", name)
	}
	if fe, ok := errors.AsType[*failure.Error](err); ok {
		return failure.Wrap(fe.Code, fe, "%s", name)
	}
	if errors.Is(context.Cause(ctx), errStepsTimeout) {
		return failure.Wrap(failure.Timeout, err, "%s: the steps did not finish within their %s budget", name, budget)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return failure.Wrap(failure.RenderFailed, err, "%s", name)
}

// step runs one step and waits until the page and its requests are quiet
// again (within stepQuietBudget).
func (r *stepRun) step(ctx context.Context, s fetchopts.Step) error {
	page := r.t.page.Context(ctx)
	if s.Selector != "" {
		if err := checkSelector(page, s.Selector); err != nil {
			return err
		}
	}
	quiet := r.t.quietAfter(ctx)
	var err error
	switch s.Type {
	case fetchopts.StepClick:
		err = r.click(ctx, page, s)
	case fetchopts.StepType:
		var el *rod.Element
		if el, err = element(ctx, page, s.Selector, 0); err == nil {
			err = el.Input(s.Input())
		}
	case fetchopts.StepPress:
		err = page.Keyboard.Type(keyOf(s.Key))
	case fetchopts.StepScroll:
		err = scrollBy(ctx, page, s)
	case fetchopts.StepWait:
		select {
		case <-time.After(time.Duration(s.Milliseconds) * time.Millisecond):
		case <-ctx.Done():
			err = context.Cause(ctx)
		}
	case fetchopts.StepWaitForSelector:
		_, err = element(ctx, page, s.Selector, time.Duration(s.Milliseconds)*time.Millisecond)
	case fetchopts.StepExecuteJavascript:
		err = r.executeJavascript(page, s)
	case fetchopts.StepScreenshot:
		err = r.screenshot(page, s)
	default:
		err = fmt.Errorf("unknown step type %q", s.Type)
	}
	if err != nil {
		quiet(0)
		return err
	}
	quiet(stepQuietBudget)
	if r.t.withheldRequest() != nil {
		return errWithheld
	}
	if left := r.t.left(r.target); left != nil {
		return left
	}
	if refused := r.t.refusedNav(); refused != nil {
		return failure.Wrap(failure.Blocked, refused, "navigation refused")
	}
	return nil
}

// checkSelectorScript throws nothing: it returns the browser's complaint
// about a selector it cannot parse, or "".
const checkSelectorScript = `(s) => { try { document.querySelector(s); return ''; } catch (e) { return String(e.message); } }`

// checkSelector fails at once on a selector the browser cannot parse,
// rather than waiting for an element that can never match.
func checkSelector(page *rod.Page, sel string) error {
	res, err := page.Eval(checkSelectorScript, sel)
	if err != nil {
		return fmt.Errorf("check selector: %w", err)
	}
	if msg := res.Value.Str(); msg != "" {
		return failure.New(failure.InvalidArgument, "selector does not parse: %s", msg)
	}
	return nil
}

// element waits for sel's first element, at most wait (elementWait when 0).
func element(ctx context.Context, page *rod.Page, sel string, wait time.Duration) (*rod.Element, error) {
	if wait <= 0 {
		wait = elementWait
	}
	ectx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	el, err := page.Context(ectx).Element(sel)
	if err != nil {
		if ectx.Err() != nil && ctx.Err() == nil {
			return nil, failure.New(failure.Timeout, "no element matched within %s", wait)
		}
		return nil, err
	}
	return el.Context(ctx), nil
}

// clickableScript says whether sel's element is still there to click: a
// "load more" button that is gone, hidden or disabled has nothing left to
// load.
const clickableScript = `(s) => {
	const e = document.querySelector(s);
	if (!e || e.disabled) return false;
	const r = e.getBoundingClientRect();
	return r.width > 0 && r.height > 0;
}`

// click clicks the element, and clicks it again, up to repeat times in
// all, for as long as it is there; only the first click needs it. Between
// clicks the page's requests go quiet; after the last, step waits for
// them, as after any step.
func (r *stepRun) click(ctx context.Context, page *rod.Page, s fetchopts.Step) error {
	times := max(s.Repeat, 1)
	for i := range times {
		if i > 0 {
			if r.t.withheldRequest() != nil {
				return errWithheld
			}
			res, err := page.Eval(clickableScript, s.Selector)
			if err != nil {
				return err
			}
			if !res.Value.Bool() {
				return nil
			}
		}
		el, err := element(ctx, page, s.Selector, 0)
		if err != nil {
			return err
		}
		quiet := r.t.quietAfter(ctx)
		ectx, cancel := context.WithTimeout(ctx, elementWait)
		err = el.Context(ectx).Click(proto.InputMouseButtonLeft, 1)
		cancel()
		if err != nil {
			quiet(0)
			if ectx.Err() != nil && ctx.Err() == nil {
				return failure.New(failure.Timeout, "the element did not become clickable within %s", elementWait)
			}
			return fmt.Errorf("click: %w", err)
		}
		if i < times-1 {
			quiet(stepQuietBudget)
		} else {
			quiet(0)
		}
	}
	return nil
}

// keys maps the names a press step may use to rod's keys.
var keys = map[string]input.Key{
	"Enter": input.Enter, "Tab": input.Tab, "Escape": input.Escape, "Backspace": input.Backspace,
	"Delete": input.Delete, "Space": input.Space, "ArrowUp": input.ArrowUp, "ArrowDown": input.ArrowDown,
	"ArrowLeft": input.ArrowLeft, "ArrowRight": input.ArrowRight, "PageUp": input.PageUp,
	"PageDown": input.PageDown, "Home": input.Home, "End": input.End,
}

func keyOf(name string) input.Key {
	if k, ok := keys[name]; ok {
		return k
	}
	return input.Key([]rune(name)[0])
}

// scrollByScript scrolls the window, or an element when a selector is
// given, by dy pixels (a viewport's height when 0).
const scrollByScript = `(sel, dy, up) => {
	const t = sel ? document.querySelector(sel) : null;
	if (sel && !t) return false;
	const by = dy || (t ? t.clientHeight : window.innerHeight);
	(t || window).scrollBy(0, up ? -by : by);
	return true;
}`

func scrollBy(ctx context.Context, page *rod.Page, s fetchopts.Step) error {
	if s.Selector != "" {
		if _, err := element(ctx, page, s.Selector, 0); err != nil {
			return err
		}
	}
	_, err := page.Eval(scrollByScript, s.Selector, s.Amount, s.Direction == "up")
	return err
}

// scrollToEnd scrolls to the bottom until the page stops growing, at most
// max times, and returns how many times it grew.
func (r *stepRun) scrollToEnd(ctx context.Context, most int) (int, error) {
	page := r.t.page.Context(ctx)
	height := func() (int, error) {
		res, err := page.Eval(`() => document.documentElement.scrollHeight`)
		if err != nil {
			return 0, err
		}
		return res.Value.Int(), nil
	}
	grew := 0
	for range most {
		before, err := height()
		if err != nil {
			return grew, err
		}
		quiet := r.t.quietAfter(ctx)
		if _, err := page.Eval(`() => window.scrollTo(0, document.documentElement.scrollHeight)`); err != nil {
			return grew, err
		}
		quiet(stepQuietBudget)
		after, err := height()
		if err != nil {
			return grew, err
		}
		// Some pages append on a timer rather than after a request.
		for deadline := time.Now().Add(growthWait); after <= before && time.Now().Before(deadline); {
			select {
			case <-time.After(100 * time.Millisecond):
			case <-ctx.Done():
				return grew, context.Cause(ctx)
			}
			if after, err = height(); err != nil {
				return grew, err
			}
		}
		if left := r.t.left(r.target); left != nil {
			return grew, left
		}
		if after <= before {
			break
		}
		grew++
	}
	return grew, nil
}

// executeJavascriptTail runs the step's script (run, an async function)
// and returns its value as JSON, or only the JSON's length when that is
// over what the render's steps may still return.
const executeJavascriptTail = `
	const v = await run();
	let s;
	try { s = JSON.stringify(v === undefined ? null : v); } catch (e) { s = JSON.stringify(String(v)); }
	if (s === undefined) s = 'null';
	return s.length > left ? {units: s.length} : {json: s};
}`

// executeJavascript runs the step's script: an expression, whose value is
// returned, or statements, whose return is.
func (r *stepRun) executeJavascript(page *rod.Page, s fetchopts.Step) error {
	// Made, not run: a syntax error here means the script is statements.
	mk := func(fn string) (*proto.RuntimeRemoteObject, error) {
		return page.Evaluate(rod.Eval("() => " + fn).ByObject())
	}
	run, err := mk("async () => (" + s.Script + "\n)")
	if err != nil && strings.Contains(err.Error(), "SyntaxError") {
		run, err = mk("async () => {" + s.Script + "\n}")
	}
	if err != nil {
		return fmt.Errorf("script: %w", err)
	}
	res, err := page.Evaluate(rod.Eval("async (run, left) => {"+executeJavascriptTail, run, r.jsLeft).ByPromise())
	if err != nil {
		return fmt.Errorf("script: %w", err)
	}
	var out struct {
		JSON  *string `json:"json"`
		Units int     `json:"units"`
	}
	if err := res.Value.Unmarshal(&out); err != nil || out.JSON == nil {
		if out.Units > 0 {
			return failure.New(failure.TooLarge, "the scripts' values are over %d characters, over the %d byte limit of all scripts' values", out.Units, MaxJSValueBytes)
		}
		return fmt.Errorf("script value: unreadable %s", res.Value.Raw())
	}
	if len(*out.JSON) > r.jsLeft {
		return failure.New(failure.TooLarge, "the scripts' values are over the %d byte limit of all scripts' values", MaxJSValueBytes)
	}
	r.jsLeft -= len(*out.JSON)
	r.results = append(r.results, &distillv1.StepResult{Index: int32(r.ran), Type: s.Type, Value: out.JSON})
	return nil
}

// screenshot takes a PNG of the viewport, or of the whole page.
func (r *stepRun) screenshot(page *rod.Page, s fetchopts.Step) error {
	shot, err := screenshot(page, s.FullPage, fetchopts.FormatPNG, r.shotLeft)
	if err != nil {
		return err
	}
	r.shotLeft -= len(shot)
	r.results = append(r.results, &distillv1.StepResult{Index: int32(r.ran), Type: s.Type, Screenshot: shot})
	return nil
}
