package render

import (
	"context"
	"errors"

	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// A phase is one thing a render does to its page. The request alone
// selects the phases that run (when; nil for every render), and they run in
// the order of phases: the order the page needs them. A new browser option
// is a new phase in that list.
type phase struct {
	name string
	when func(*renderJob) bool
	run  func(*renderJob, context.Context) error
}

// phases are a render's phases in order: the page is opened in a browser
// context of its own, put under guard before it loads anything, given the
// session's cookies, prepared for what is asked of it, navigated and
// settled; then its steps run, and it is read.
var phases = []phase{
	{"open", nil, (*renderJob).open},
	{"guard", nil, (*renderJob).guard},
	{"cookies", (*renderJob).hasCookies, (*renderJob).setCookies},
	{"viewport", (*renderJob).browserWork, (*renderJob).setViewport},
	{"capture", (*renderJob).capturing, (*renderJob).startCapture},
	{"close popups", (*renderJob).hasSteps, (*renderJob).closePopups},
	{"load", nil, (*renderJob).load},
	{"withhold unsafe", (*renderJob).withholding, (*renderJob).holdUnsafe},
	{"steps", (*renderJob).stepping, (*renderJob).runSteps},
	{"snapshot", nil, (*renderJob).snapshot},
	{"cookies after", (*renderJob).keepsCookies, (*renderJob).readCookies},
	{"screenshot", (*renderJob).screenshotting, (*renderJob).screenshot},
	{"pdf", (*renderJob).printing, (*renderJob).printPDF},
	{"mhtml", (*renderJob).archiving, (*renderJob).archiveMHTML},
	{"step results", (*renderJob).stepping, (*renderJob).stepResults},
	{"network", (*renderJob).capturing, (*renderJob).network},
	{"blocked count", (*renderJob).blocking, (*renderJob).blockedCount},
}

// errAnswered ends a render before its last phase: the phase that returns
// it has set the render's answer.
var errAnswered = errors.New("the render's answer is ready")

// renderJob is one render as its phases see it: the request, and what the
// phases before have opened, started and read.
type renderJob struct {
	r      *Renderer
	inst   *instance
	g      *guard
	req    *internalv1.RenderRequest
	opts   *distillv1.FetchOptions
	target string
	steps  []fetchopts.Step

	t    *tab
	capt *capture
	run  *stepRun
	res  *internalv1.RenderResponse
	// undo takes down what the phases opened, last opened first.
	undo []func()
}

func (r *Renderer) newRenderJob(inst *instance, g *guard, req *internalv1.RenderRequest) *renderJob {
	opts := req.GetOptions()
	// Validate has read them already.
	steps, _ := fetchopts.ParseSteps(opts.GetSteps())
	return &renderJob{r: r, inst: inst, g: g, req: req, opts: opts, target: req.GetUrl(), steps: steps}
}

// plan is the phases the request's options select, in order.
func (j *renderJob) plan() []phase {
	var out []phase
	for _, p := range phases {
		if p.when == nil || p.when(j) {
			out = append(out, p)
		}
	}
	return out
}

func (j *renderJob) onEnd(f func()) { j.undo = append(j.undo, f) }

// end takes down what the phases opened, in reverse: the wait for network
// quiet ends, request interception stops, and the page is closed (see
// tab.close).
func (j *renderJob) end() {
	for i := len(j.undo) - 1; i >= 0; i-- {
		j.undo[i]()
	}
}

// What the options select.

func (j *renderJob) hasCookies() bool     { return len(j.r.cookies(j.req)) > 0 }
func (j *renderJob) browserWork() bool    { return fetchopts.Browser(j.opts) }
func (j *renderJob) capturing() bool      { return fetchopts.Capturing(j.opts) }
func (j *renderJob) hasSteps() bool       { return len(j.steps) > 0 }
func (j *renderJob) stepping() bool       { return j.hasSteps() || fetchopts.Scrolls(j.opts) > 0 }
func (j *renderJob) withholding() bool    { return j.stepping() && j.req.GetWithholdUnsafe() }
func (j *renderJob) keepsCookies() bool   { return len(j.req.GetCookies()) > 0 || j.hasSteps() }
func (j *renderJob) screenshotting() bool { return j.opts.GetScreenshot() != "" }
func (j *renderJob) printing() bool       { return j.opts.GetPdf() }
func (j *renderJob) archiving() bool      { return j.opts.GetMhtml() }
func (j *renderJob) blocking() bool       { return len(blockTypes(j.opts.GetBlock())) > 0 }

// The phases.

// open opens the page in a browser context of its own, with the resource
// types options.block skips.
func (j *renderJob) open(ctx context.Context) error {
	t, err := j.r.openPage(ctx, j.inst, j.g.policy)
	if err != nil {
		return err
	}
	j.t = t
	j.onEnd(t.close)
	t.block = blockTypes(j.opts.GetBlock())
	return nil
}

func (j *renderJob) guard(ctx context.Context) error {
	stop, err := j.r.guardPage(ctx, j.t, j.g)
	if err != nil {
		return err
	}
	j.onEnd(stop)
	return nil
}

func (j *renderJob) setCookies(context.Context) error {
	return setCookies(j.t.page, j.target, j.r.cookies(j.req))
}

func (j *renderJob) setViewport(context.Context) error { return setViewport(j.t.page) }

func (j *renderJob) startCapture(ctx context.Context) error {
	j.capt = startCapture(ctx, j.t, j.g, j.opts)
	return nil
}

func (j *renderJob) closePopups(context.Context) error { return j.t.closePopups() }

// load navigates and waits for the page to settle, within the render's
// timeout; the steps, run after it, have a budget of their own.
func (j *renderJob) load(context.Context) error {
	t := j.t
	lctx, lcancel := context.WithTimeoutCause(t.page.GetContext(), fetchopts.Timeout(j.opts), errTimeout)
	defer lcancel()
	// The wait for quiet counts from before navigation and lasts the
	// render.
	idle := t.watchIdle()
	j.onEnd(idle.cancel)
	if err := t.navigateIn(t.page.Context(lctx), j.target); err != nil {
		return j.loadErr(lctx, err)
	}
	if err := settle(lctx, t.page.Context(lctx), j.opts, idle); err != nil {
		return j.loadErr(lctx, err)
	}
	return nil
}

// loadErr says Timeout past the load's own deadline, which the render's may
// not have passed, as classify does for the render's.
func (j *renderJob) loadErr(lctx context.Context, err error) error {
	if left := j.t.left(j.target); left != nil {
		return left
	}
	if _, ok := errors.AsType[*failure.Error](err); !ok && errors.Is(context.Cause(lctx), errTimeout) {
		return failure.Wrap(failure.Timeout, err, "render %s: not loaded within the %s timeout", j.target, fetchopts.Timeout(j.opts))
	}
	return err
}

func (j *renderJob) holdUnsafe(context.Context) error { return j.t.holdUnsafeRequests() }

// runSteps runs the steps and the scroll. When a step's request was
// withheld, nothing was sent: what the page shows then is not an answer to
// read, and the session it is for stays where it was.
func (j *renderJob) runSteps(context.Context) error {
	t := j.t
	run, err := runSteps(t.page.GetContext(), t, j.target, j.steps, fetchopts.Scrolls(j.opts), fetchopts.StepsBudget(j.opts))
	j.run = run
	if errors.Is(err, errWithheld) {
		j.res = &internalv1.RenderResponse{FinalUrl: j.target, Status: int32(t.mainStatus()),
			Withheld: t.withheldRequest(), StepsRun: proto.Int32(int32(run.ran))}
		return errAnswered
	}
	return err
}

func (j *renderJob) snapshot(context.Context) (err error) {
	j.res, err = j.t.snapshot(j.target)
	return err
}

func (j *renderJob) readCookies(context.Context) (err error) {
	j.res.CookiesAfter, err = j.r.cookiesAfter(j.t)
	return err
}

// screenshot, printPDF and archiveMHTML take what the options ask of the
// rendered page besides its DOM.
func (j *renderJob) screenshot(context.Context) (err error) {
	kind := j.opts.GetScreenshot()
	j.res.Screenshot, err = screenshot(j.t.page, kind == fetchopts.ScreenshotFull, fetchopts.ScreenshotFormat(j.opts), MaxScreenshotBytes)
	return j.artifactErr(err)
}

func (j *renderJob) printPDF(context.Context) (err error) {
	j.res.Pdf, err = printPDF(j.t.page)
	return j.artifactErr(err)
}

func (j *renderJob) archiveMHTML(context.Context) (err error) {
	j.res.Mhtml, err = archiveMHTML(j.t.page)
	return j.artifactErr(err)
}

func (j *renderJob) artifactErr(err error) error {
	if err != nil {
		return failure.Wrap(failure.CodeOf(err), err, "render %s", j.target)
	}
	return nil
}

func (j *renderJob) stepResults(context.Context) error {
	j.res.StepsRun = proto.Int32(int32(j.run.ran))
	if len(j.run.results) > 0 {
		j.res.Steps = &distillv1.StepResults{Items: j.run.results}
	}
	return nil
}

func (j *renderJob) network(context.Context) error {
	j.res.Network = j.capt.result()
	return nil
}

func (j *renderJob) blockedCount(context.Context) error {
	j.res.BlockedResources = proto.Int32(j.t.blocked.Load())
	return nil
}
