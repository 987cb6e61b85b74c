package firecrawl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"distill.dev/proto/fetchopts"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/extract"
)

// scrapeOptions are Firecrawl's scrape options, the v1 ones included, as
// the scrape, batch and (later) crawl requests carry them. Every key of
// Firecrawl's schema is listed, so that what distill does not do is
// refused or warned about by name, and an unknown key is refused as
// Firecrawl's strict schema refuses it.
type scrapeOptions struct {
	Formats             []json.RawMessage `json:"formats"`
	OnlyMainContent     *bool             `json:"onlyMainContent"`
	IncludeTags         []string          `json:"includeTags"`
	ExcludeTags         []string          `json:"excludeTags"`
	WaitFor             *int64            `json:"waitFor"`
	Timeout             *int64            `json:"timeout"`
	MaxAge              *int64            `json:"maxAge"`
	MinAge              *int64            `json:"minAge"`
	Headers             map[string]string `json:"headers"`
	Location            json.RawMessage   `json:"location"`
	Parsers             []json.RawMessage `json:"parsers"`
	Actions             json.RawMessage   `json:"actions"`
	Mobile              *bool             `json:"mobile"`
	SkipTLSVerification *bool             `json:"skipTlsVerification"`
	RemoveBase64Images  *bool             `json:"removeBase64Images"`
	BlockAds            *bool             `json:"blockAds"`
	FastMode            *bool             `json:"fastMode"`
	Proxy               string            `json:"proxy"`
	StoreInCache        *bool             `json:"storeInCache"`
	ZeroDataRetention   *bool             `json:"zeroDataRetention"`
	Lockdown            *bool             `json:"lockdown"`
	RedactPII           json.RawMessage   `json:"redactPII"`
	Profile             json.RawMessage   `json:"profile"`
	UseMock             string            `json:"useMock"`
	OnlyCleanContent    *bool             `json:"onlyCleanContent"`
	SafeMode            *bool             `json:"safeMode"`
	// Who is calling, and policies of Firecrawl's cloud: nothing to do
	// with the content, accepted and left alone.
	Origin           string          `json:"origin"`
	Integration      json.RawMessage `json:"integration"`
	ThreatProtection json.RawMessage `json:"threatProtection"`
	AuditMetadata    json.RawMessage `json:"auditMetadata"`
	DomainTools      *bool           `json:"domainTools"`
	ToolDetail       string          `json:"toolDetail"`

	// v1 only.
	ParsePDF              *bool           `json:"parsePDF"`
	JSONOptions           json.RawMessage `json:"jsonOptions"`
	Extract               json.RawMessage `json:"extract"`
	ChangeTrackingOptions json.RawMessage `json:"changeTrackingOptions"`
	Agent                 json.RawMessage `json:"agent"`
}

// formats says which parts of a page a request asked for.
type formats struct {
	markdown, html, rawHTML, links, images bool
	// screenshot is the format, actions what the actions returned.
	screenshot, actions bool
	// summary is the model's summary of the page.
	summary bool
	// v1JSON is the v1 format (json or extract) whose options come in
	// jsonOptions or extract.
	v1JSON string
}

// plan is a scrape request in distill's terms.
type plan struct {
	opts *distillv1.FetchOptions
	want formats
	// pdf is false when parsers leaves PDFs out: a PDF is then refused
	// rather than read.
	pdf bool
	// json is the json format's request (v1: json with jsonOptions, or
	// extract with extract).
	json     *jsonFormat
	warnings []string
}

// Firecrawl's bounds on waitFor and timeout, in milliseconds.
const (
	maxWaitForMS = 60000
	minTimeoutMS = 1000
)

// plan checks o and maps it onto FetchOptions. version is the API's (1 or
// 2), whose formats differ a little.
func (o *scrapeOptions) plan(version int, allowLocal bool) (*plan, *apiError) {
	p := &plan{pdf: true, opts: &distillv1.FetchOptions{
		Format:      distillv1.Format_FORMAT_MARKDOWN,
		Diagnostics: true,
		AllowLocal:  allowLocal,
	}}
	for _, step := range planSteps {
		if err := step(p, o, version); err != nil {
			return nil, err
		}
	}
	p.readsPage()
	return p, nil
}

// planStep maps one concern of a request's scrape options onto p, or
// refuses them.
type planStep func(p *plan, o *scrapeOptions, version int) *apiError

// planSteps are the steps of plan, in order: the first refusal is the
// answer, so their order is the order in which a request's faults are
// reported, and the order of its warnings. An option distill does not
// honour is one refuse or ignore entry.
var planSteps = []planStep{
	planFormats,
	planPageParts,
	planWaitFor,
	planTimeout,
	planCache,
	func(p *plan, o *scrapeOptions, _ int) *apiError { return p.actions(o.Actions) },
	func(p *plan, o *scrapeOptions, _ int) *apiError { return p.headers(o.Headers) },

	refuse("mobile", "", func(o *scrapeOptions) bool { return on(o.Mobile) }),
	refuse("lockdown", "", func(o *scrapeOptions) bool { return on(o.Lockdown) }),
	refuse("redactPII", "", func(o *scrapeOptions) bool { return !isNull(o.RedactPII) && string(o.RedactPII) != "false" }),
	refuse("profile", "distill keeps no browser profiles between requests", func(o *scrapeOptions) bool { return !isNull(o.Profile) }),
	refuse("useMock", "", func(o *scrapeOptions) bool { return o.UseMock != "" }),
	func(_ *plan, o *scrapeOptions, _ int) *apiError { return threatProtection(o.ThreatProtection) },
	refuse("domainTools", "", func(o *scrapeOptions) bool { return on(o.DomainTools) }),
	// A protection the caller asks for is refused, not pretended.
	refuse("safeMode", "", func(o *scrapeOptions) bool { return on(o.SafeMode) }),

	func(p *plan, o *scrapeOptions, version int) *apiError { return p.v1JSON(o, version) },
	refuse("changeTrackingOptions", "", func(o *scrapeOptions) bool { return !isNull(o.ChangeTrackingOptions) }),
	refuse("agent", "", func(o *scrapeOptions) bool { return !isNull(o.Agent) }),
	planPDF,

	ignore("location is ignored: distill fetches from where it runs",
		func(o *scrapeOptions) bool { return !isNull(o.Location) }),
	ignore("skipTlsVerification is ignored: distill always verifies TLS certificates",
		func(o *scrapeOptions) bool { return on(o.SkipTLSVerification) }),
	planProxy,
	ignore("minAge is ignored: distill answers from its cache while the page is fresh, else fetches it",
		func(o *scrapeOptions) bool { return o.MinAge != nil }),
	ignore("onlyCleanContent is ignored: distill's Markdown is its own cleaning",
		func(o *scrapeOptions) bool { return on(o.OnlyCleanContent) }),
	// Firecrawl's defaults (true, true, false) are what distill does; the
	// other way round it cannot.
	ignore("removeBase64Images: false is ignored: distill's Markdown and HTML never hold base64 images",
		func(o *scrapeOptions) bool { return off(o.RemoveBase64Images) }),
	ignore("blockAds: false is ignored: distill's reader drops adverts and cookie banners",
		func(o *scrapeOptions) bool { return off(o.BlockAds) }),
	ignore("fastMode is ignored: distill reads every page the same way",
		func(o *scrapeOptions) bool { return on(o.FastMode) }),
}

// refuse is the step that refuses the option name when set says o sets
// it; why, if not empty, says why distill cannot honour it.
func refuse(name, why string, set func(o *scrapeOptions) bool) planStep {
	return func(_ *plan, o *scrapeOptions, _ int) *apiError {
		if set(o) {
			return notSupported(name, why)
		}
		return nil
	}
}

// ignore is the step that adds warning to the plan when set says o sets
// an option distill leaves alone.
func ignore(warning string, set func(o *scrapeOptions) bool) planStep {
	return func(p *plan, o *scrapeOptions, _ int) *apiError {
		if set(o) {
			p.warn(warning)
		}
		return nil
	}
}

// on says whether an optional flag is set and true.
func on(b *bool) bool { return b != nil && *b }

// off says whether an optional flag is set and false.
func off(b *bool) bool { return b != nil && !*b }

// planFormats reads the formats and what they need of the fetch.
func planFormats(p *plan, o *scrapeOptions, version int) *apiError {
	if err := p.formats(o.Formats, version); err != nil {
		return err
	}
	if p.want.links {
		// Firecrawl's links are every link of the page.
		p.opts.ExtractLinks, p.opts.LinksFull = true, true
	}
	return nil
}

// planPageParts reads which parts of the page are kept: the main content
// or all of it, and the tags included or left out.
func planPageParts(p *plan, o *scrapeOptions, _ int) *apiError {
	if off(o.OnlyMainContent) {
		p.opts.Profile = distillv1.Profile_PROFILE_FULL
	}
	if len(o.IncludeTags) > 0 {
		sel := strings.Join(o.IncludeTags, ", ")
		if err := extract.CheckSelector(sel); err != nil {
			return badRequest("includeTags: %v", err)
		}
		p.opts.IncludeTags = o.IncludeTags
	}
	if len(o.ExcludeTags) > 0 {
		sel := strings.Join(o.ExcludeTags, ", ")
		if err := extract.CheckSelector(sel); err != nil {
			return badRequest("excludeTags: %v", err)
		}
		p.opts.ExcludeTags = o.ExcludeTags
	}
	return nil
}

// planWaitFor bounds waitFor. distill renders only the pages that need
// it; waitFor is how long such a render may wait for the page to settle.
func planWaitFor(p *plan, o *scrapeOptions, _ int) *apiError {
	switch {
	case o.WaitFor == nil:
	case *o.WaitFor < 0 || *o.WaitFor > maxWaitForMS:
		return badRequest("waitFor must be between 0 and %d milliseconds, got %d", maxWaitForMS, *o.WaitFor)
	case *o.WaitFor > 0:
		w := int32(*o.WaitFor)
		p.opts.JsWait = &w
	}
	return nil
}

// planTimeout bounds timeout, in milliseconds, and rounds it up to the
// whole seconds of FetchOptions.
func planTimeout(p *plan, o *scrapeOptions, _ int) *apiError {
	if o.Timeout == nil {
		return nil
	}
	if *o.Timeout < minTimeoutMS {
		return badRequest("timeout must be at least %d milliseconds, got %d", minTimeoutMS, *o.Timeout)
	}
	secs := int32(min((*o.Timeout+999)/1000, 1<<30))
	p.opts.TimeoutSecs = &secs
	return nil
}

// planCache maps maxAge, storeInCache and zeroDataRetention onto distill's
// cache.
func planCache(p *plan, o *scrapeOptions, _ int) *apiError {
	switch {
	case o.MaxAge == nil:
	case *o.MaxAge < 0:
		return badRequest("maxAge cannot be negative, got %d", *o.MaxAge)
	case *o.MaxAge == 0:
		p.opts.NoCache = true
	default:
		ttl := max(*o.MaxAge/1000, 1)
		p.opts.CacheTtl = &ttl
	}
	if off(o.StoreInCache) || on(o.ZeroDataRetention) {
		// Keeping nothing is what both ask; distill's cache has no
		// write-only mode, so the page is neither read from it nor kept.
		p.opts.NoCache = true
	}
	return nil
}

// planPDF reads parsers and v1's parsePDF: whether a PDF is read.
func planPDF(p *plan, o *scrapeOptions, _ int) *apiError {
	if err := p.parsers(o.Parsers); err != nil {
		return err
	}
	if off(o.ParsePDF) {
		p.pdf = false
	}
	return nil
}

// planProxy warns of a proxy distill does not use; basic and auto are
// what it does.
func planProxy(p *plan, o *scrapeOptions, _ int) *apiError {
	switch o.Proxy {
	case "", "basic", "auto":
	default:
		p.warn(fmt.Sprintf("proxy %q is ignored: distill fetches directly, under its network policy", o.Proxy))
	}
	return nil
}

func (p *plan) warn(w string) { p.warnings = append(p.warnings, w) }

// v1JSON reads v1's json and extract formats, whose schema and prompt
// come beside formats, in jsonOptions or extract.
func (p *plan) v1JSON(o *scrapeOptions, version int) *apiError {
	if version != 1 {
		for _, f := range []struct {
			name string
			raw  json.RawMessage
		}{{"jsonOptions", o.JSONOptions}, {"extract", o.Extract}} {
			if !isNull(f.raw) {
				return badRequest("Unrecognized key in body: %s", f.name)
			}
		}
		return nil
	}
	raw, field := o.JSONOptions, "jsonOptions"
	if p.want.v1JSON == "extract" || isNull(raw) {
		raw, field = o.Extract, "extract"
	}
	switch {
	case p.want.v1JSON == "" && (!isNull(o.JSONOptions) || !isNull(o.Extract)):
		return badRequest("jsonOptions and extract go with the json or extract format")
	case p.want.v1JSON == "":
		return nil
	case isNull(raw):
		return badRequest("formats: %s needs jsonOptions with a schema or a prompt", p.want.v1JSON)
	}
	f, err := readJSONFormat(raw, field)
	if err != nil {
		return err
	}
	p.json = f
	return nil
}

// headers go with the fetch, to the page's origin only. A browser loads
// the page without them, so a page fetched with headers is read as
// fetched (fetchopts.JS), and browser work with them is refused rather
// than done without them.
func (p *plan) headers(h map[string]string) *apiError {
	if len(h) == 0 {
		return nil
	}
	if err := fetchopts.CheckHeaders(h); err != nil {
		return badRequest("%v", err)
	}
	if fetchopts.Browser(p.opts) {
		return notSupported("headers with actions or a screenshot", "the browser loads the page without them")
	}
	p.opts.Headers = h
	return nil
}

// formats reads Firecrawl's formats, each a name or an object with a type.
func (p *plan) formats(list []json.RawMessage, version int) *apiError {
	if list == nil {
		p.want.markdown = true
		return nil
	}
	for _, raw := range list {
		name, err := formatName(raw)
		if err != nil {
			return err
		}
		switch name {
		case "markdown":
			p.want.markdown = true
		case "content":
			if version != 1 {
				return badRequest("formats: unknown format %q", name)
			}
			p.want.markdown = true
		case "html":
			p.want.html = true
		case "rawHtml":
			p.want.rawHTML = true
		case "links":
			p.want.links = true
		case "images":
			if version == 1 {
				return badRequest("formats: unknown format %q", name)
			}
			p.want.images = true
		case "screenshot", "screenshot@fullPage":
			if err := p.screenshot(raw, name == "screenshot@fullPage"); err != nil {
				return err
			}
		case "json":
			if version == 1 {
				// v1 names the format and gives its options beside it.
				p.want.v1JSON = "json"
				continue
			}
			f, err := readJSONFormat(raw, "formats: json")
			if err != nil {
				return err
			}
			p.json = f
		case "extract":
			if version != 1 {
				return badRequest("formats: unknown format %q", name)
			}
			p.want.v1JSON = "extract"
		case "summary":
			if version == 1 {
				return badRequest("formats: unknown format %q", name)
			}
			p.want.summary = true
		case "changeTracking", "attributes",
			"branding", "product", "menu", "audio", "video", "question", "highlights", "query", "rawBase64", "deterministicJson":
			return notSupported("formats: "+name, "")
		default:
			return badRequest("formats: unknown format %q", name)
		}
	}
	return nil
}

// formatName is a format's name, given as "markdown" or {"type": "markdown"}.
func formatName(raw json.RawMessage) (string, *apiError) {
	var name string
	if err := json.Unmarshal(raw, &name); err == nil {
		return name, nil
	}
	var obj struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil || obj.Type == "" {
		return "", badRequest("formats: each format is a name or an object with a type, got %s", raw)
	}
	return obj.Type, nil
}

// parsers reads Firecrawl's parsers: PDFs are read by default (their text
// layer); images would need OCR, which distill does not have.
func (p *plan) parsers(list []json.RawMessage) *apiError {
	if list == nil {
		return nil
	}
	p.pdf = false
	for _, raw := range list {
		var name string
		if json.Unmarshal(raw, &name) == nil {
			raw = json.RawMessage(fmt.Sprintf(`{"type":%q}`, name))
		}
		var parser struct {
			Type        string `json:"type"`
			Mode        string `json:"mode"`
			MaxPages    *int   `json:"maxPages"`
			Pages       *bool  `json:"pages"`
			PageMD      *bool  `json:"pageMarkdown"`
			Blocks      *bool  `json:"blocks"`
			PageMarkers *bool  `json:"pageMarkers"`
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&parser); err != nil {
			return badRequest("parsers: %s", jsonMessage(err))
		}
		switch parser.Type {
		case "pdf":
		case "image":
			return notSupported("parsers: image", "distill reads text layers and has no OCR")
		default:
			return badRequest("parsers: unknown parser %q", parser.Type)
		}
		p.pdf = true
		switch parser.Mode {
		case "", "auto", "fast":
		case "ocr":
			return notSupported("parsers: pdf mode ocr", "distill reads a PDF's text layer and has no OCR")
		default:
			return badRequest("parsers: unknown pdf mode %q", parser.Mode)
		}
		for _, f := range []struct {
			name string
			on   *bool
		}{{"pages", parser.Pages}, {"pageMarkdown", parser.PageMD}, {"blocks", parser.Blocks}, {"pageMarkers", parser.PageMarkers}} {
			if f.on != nil && *f.on {
				return notSupported("parsers: pdf "+f.name, "")
			}
		}
		if parser.MaxPages != nil {
			p.warn("parsers: pdf maxPages is ignored: distill reads the pages its output can hold")
		}
	}
	return nil
}

func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}

func isEmptyArray(raw json.RawMessage) bool {
	var a []json.RawMessage
	return json.Unmarshal(raw, &a) == nil && len(a) == 0
}
