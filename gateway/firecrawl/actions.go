package firecrawl

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"

	"distill.dev/proto/fetchopts"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// action is one of Firecrawl's actions: every key any of them has, so that
// an unknown one is refused as Firecrawl's schema refuses it.
type action struct {
	Type         string          `json:"type"`
	Milliseconds *int            `json:"milliseconds"`
	Selector     string          `json:"selector"`
	All          *bool           `json:"all"`
	Text         string          `json:"text"`
	Key          string          `json:"key"`
	Direction    string          `json:"direction"`
	Script       string          `json:"script"`
	FullPage     *bool           `json:"fullPage"`
	Quality      *int            `json:"quality"`
	Viewport     json.RawMessage `json:"viewport"`
	Format       string          `json:"format"`
	Landscape    *bool           `json:"landscape"`
	Scale        *float64        `json:"scale"`
}

// actions maps Firecrawl's actions onto the renderer's steps, which take
// Firecrawl's format with two differences: a write types into the element
// the click before it chose (distill's type step names its element), and
// scrape and pdf actions have no step.
func (p *plan) actions(raw json.RawMessage) *apiError {
	if isNull(raw) || isEmptyArray(raw) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var list []action
	if err := dec.Decode(&list); err != nil {
		return badRequest("actions: %s", jsonMessage(err))
	}
	steps := make([]fetchopts.Step, 0, len(list))
	lastClicked := ""
	for i, a := range list {
		name := fmt.Sprintf("actions[%d] (%s)", i, a.Type)
		s := fetchopts.Step{Type: a.Type, Selector: a.Selector}
		switch a.Type {
		case "wait":
			if a.Milliseconds != nil {
				s.Milliseconds = *a.Milliseconds
			}
		case "click":
			if a.All != nil && *a.All {
				return notSupported(name+": all", "distill clicks the first element the selector matches")
			}
			lastClicked = a.Selector
		case "write":
			if lastClicked == "" {
				return notSupported(name, "distill types into an element: click it first")
			}
			s.Type, s.Selector, s.Value = fetchopts.StepType, lastClicked, a.Text
		case "press":
			s.Key = a.Key
		case "scroll":
			s.Direction = a.Direction
		case "executeJavascript":
			s.Script = a.Script
		case "screenshot":
			s.FullPage = a.FullPage != nil && *a.FullPage
			if !isNull(a.Viewport) {
				return notSupported(name+": viewport", "distill's browser has one viewport, 1280x800")
			}
			if a.Quality != nil {
				p.warn(name + ": quality is ignored: step screenshots are PNG")
			}
		case "scrape":
			return notSupported(name, "the page is read once, after the last action")
		case "pdf":
			return notSupported(name, "")
		}
		steps = append(steps, s)
	}
	enc, err := json.Marshal(steps)
	if err != nil {
		return &apiError{status: http.StatusInternalServerError, msg: "actions: " + err.Error()}
	}
	if _, err := fetchopts.ParseSteps(string(enc)); err != nil {
		return badRequest("actions: %v", err)
	}
	p.opts.Steps = string(enc)
	p.want.actions = true
	return nil
}

// screenshot reads the screenshot format, a name or {type, fullPage,
// quality, viewport}.
func (p *plan) screenshot(raw json.RawMessage, full bool) *apiError {
	var f struct {
		Type     string          `json:"type"`
		FullPage *bool           `json:"fullPage"`
		Quality  *int            `json:"quality"`
		Viewport json.RawMessage `json:"viewport"`
	}
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			return badRequest("formats: screenshot: %s", jsonMessage(err))
		}
	}
	if f.FullPage != nil && *f.FullPage {
		full = true
	}
	if !isNull(f.Viewport) {
		return notSupported("formats: screenshot: viewport", "distill's browser has one viewport, 1280x800")
	}
	p.opts.Screenshot = fetchopts.ScreenshotViewport
	if full {
		p.opts.Screenshot = fetchopts.ScreenshotFull
	}
	if f.Quality != nil {
		// Firecrawl's quality is a JPEG's; distill's JPEGs have one
		// quality of their own.
		p.opts.ScreenshotFormat = fetchopts.FormatJPEG
		p.warn("formats: screenshot: quality is ignored: the screenshot is a JPEG of distill's own quality")
	}
	p.want.screenshot = true
	return nil
}

// actionsResult is Firecrawl's record of what the actions returned.
type actionsResult struct {
	Screenshots       []string   `json:"screenshots"`
	Scrapes           []any      `json:"scrapes"`
	JavascriptReturns []jsReturn `json:"javascriptReturns"`
	PDFs              []string   `json:"pdfs"`
}

type jsReturn struct {
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// actionsOf is what the steps of d returned, in Firecrawl's shape.
func actionsOf(d *distillv1.Distilled) *actionsResult {
	out := &actionsResult{Screenshots: []string{}, Scrapes: []any{}, JavascriptReturns: []jsReturn{}, PDFs: []string{}}
	for _, r := range d.GetSteps().GetItems() {
		switch {
		case r.Screenshot != nil:
			out.Screenshots = append(out.Screenshots, dataURL("image/png", r.GetScreenshot()))
		case r.Value != nil:
			var v any
			if err := json.Unmarshal([]byte(r.GetValue()), &v); err != nil {
				v = r.GetValue()
			}
			out.JavascriptReturns = append(out.JavascriptReturns, jsReturn{Type: jsType(v), Value: v})
		}
	}
	return out
}

// jsType is JavaScript's typeof of a JSON value.
func jsType(v any) string {
	switch v.(type) {
	case nil:
		return "object"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	}
	return "object"
}

// dataURL carries a picture in the document itself: Firecrawl links to
// one it stores, distill stores nothing.
func dataURL(mediaType string, b []byte) string {
	return "data:" + mediaType + ";base64," + base64.StdEncoding.EncodeToString(b)
}
