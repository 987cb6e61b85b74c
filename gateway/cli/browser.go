package cli

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"distill.dev/proto/fetchopts"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// browserFlags are fetch's flags for work only a browser does: steps,
// scrolling, pictures, archives, network capture and blocking.
type browserFlags struct {
	steps              string
	scroll             int32
	screenshot         *enumFlag
	screenshotFormat   *enumFlag
	pdf, mhtml         bool
	outFile            string
	captureNetwork     string
	captureTypes       []string
	captureCredentials bool
	block              []string
}

// captureAll is --capture-network without a value: every response of the
// types captured.
const captureAll = ".*"

func (f *browserFlags) register(fs *pflag.FlagSet) {
	f.screenshot = newEnum("", "viewport", "full")
	f.screenshotFormat = newEnum("png", "png", "jpeg")
	fs.StringVar(&f.steps, "steps", "", "run these steps in the rendered page before reading it: a JSON array of Firecrawl actions (click, type, press, scroll, wait, waitForSelector, executeJavascript, screenshot), or @FILE")
	fs.Int32Var(&f.scroll, "scroll", 0, "scroll to the end until the page stops growing, at most N times: --scroll or --scroll=N")
	fs.Lookup("scroll").NoOptDefVal = strconv.Itoa(fetchopts.DefaultScrolls)
	fs.Var(f.screenshot, "screenshot", "picture the rendered page: --screenshot [viewport|full] (the viewport by default); written with -o FILE, or base64 in JSON")
	fs.Lookup("screenshot").NoOptDefVal = fetchopts.ScreenshotViewport
	fs.Var(f.screenshotFormat, "screenshot-format", "screenshot format: png or jpeg")
	fs.BoolVar(&f.pdf, "pdf", false, "print the rendered page to PDF; written with -o FILE, or base64 in JSON")
	fs.BoolVar(&f.mhtml, "mhtml", false, "save the rendered page as one MHTML file; written with -o FILE, or base64 in JSON")
	fs.StringVarP(&f.outFile, "output", "o", "", "write the screenshot, PDF or MHTML to `FILE`; the page is printed as usual")
	fs.StringVar(&f.captureNetwork, "capture-network", "", "return the page's XHR and fetch responses whose URL matches REGEX (JSON formats): --capture-network or --capture-network=REGEX")
	fs.Lookup("capture-network").NoOptDefVal = captureAll
	fs.StringSliceVar(&f.captureTypes, "capture-types", nil, "capture these resource types instead: document, script, stylesheet, image, font, media, xhr, fetch, websocket, other")
	fs.BoolVar(&f.captureCredentials, "capture-credentials", false, "keep credential-like request headers and query values in captured responses (redacted by default)")
	fs.StringSliceVar(&f.block, "block", nil, "skip these resources while rendering: images, fonts, media (stylesheets always load)")
}

// screenshotKind takes the kind of a bare --screenshot from the
// arguments, as in `--screenshot full URL`: pflag gives a flag whose value
// is optional only the --screenshot=full form. Neither kind is a URL, so
// the argument is unambiguous.
func (f *browserFlags) screenshotKind(fs *pflag.FlagSet, args []string) []string {
	// A bare --screenshot reads as its default, viewport.
	if !fs.Changed("screenshot") || f.screenshot.value != fetchopts.ScreenshotViewport {
		return args
	}
	for i, a := range args {
		if a == fetchopts.ScreenshotViewport || a == fetchopts.ScreenshotFull {
			f.screenshot.value = a
			return append(args[:i:i], args[i+1:]...)
		}
	}
	return args
}

// load reads --steps @FILE.
func (f *browserFlags) load() error {
	name, ok := strings.CutPrefix(f.steps, "@")
	if !ok {
		return nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return fmt.Errorf("--steps: %w", err)
	}
	f.steps = string(b)
	return nil
}

func (f *browserFlags) apply(fs *pflag.FlagSet, o *distillv1.FetchOptions) {
	o.Steps = f.steps
	if fs.Changed("scroll") {
		o.Scroll = &f.scroll
	}
	o.Screenshot = f.screenshot.value
	if fs.Changed("screenshot-format") {
		o.ScreenshotFormat = f.screenshotFormat.value
	}
	o.Pdf, o.Mhtml = f.pdf, f.mhtml
	if fs.Changed("capture-network") {
		c := f.captureNetwork
		if c == captureAll {
			c = ""
		}
		o.CaptureNetwork = &c
	}
	o.CaptureTypes, o.CaptureCredentials, o.Block = f.captureTypes, f.captureCredentials, f.block
}

// check refuses what could not be printed: a picture or an archive with
// nowhere to go, a capture in a format that has no room for it.
func (f *browserFlags) check(o *distillv1.FetchOptions, format string, urls int) error {
	files := 0
	for _, on := range []bool{o.GetScreenshot() != "", o.GetPdf(), o.GetMhtml()} {
		files += boolInt(on)
	}
	json := fetchopts.Format(o) == distillv1.Format_FORMAT_JSON
	switch {
	case f.outFile != "" && files != 1:
		return errors.New("-o FILE takes one of --screenshot, --pdf or --mhtml")
	case f.outFile != "" && urls != 1:
		return errors.New("-o FILE takes one URL")
	case files > 0 && f.outFile == "" && !json:
		return fmt.Errorf("--screenshot, --pdf and --mhtml need -o FILE, or --format json for base64 (--format is %s)", format)
	case fetchopts.Capturing(o) && !json:
		return fmt.Errorf("--capture-network needs --format json or jsonl (--format is %s)", format)
	}
	return nil
}

// writeArtifact writes the page's screenshot, PDF or MHTML to name and
// takes it out of the page, which is printed as usual.
func writeArtifact(name string, d *distillv1.Distilled) error {
	var b []byte
	switch {
	case d.Screenshot != nil:
		b, d.Screenshot = d.Screenshot, nil
	case d.Pdf != nil:
		b, d.Pdf = d.Pdf, nil
	case d.Mhtml != nil:
		b, d.Mhtml = d.Mhtml, nil
	default:
		return errors.New("-o: the render returned nothing to write")
	}
	if err := os.WriteFile(name, b, 0o644); err != nil {
		return fmt.Errorf("-o: %w", err)
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
