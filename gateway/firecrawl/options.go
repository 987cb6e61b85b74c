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
	p := &plan{pdf: true}
	opts := &distillv1.FetchOptions{
		Format:      distillv1.Format_FORMAT_MARKDOWN,
		Diagnostics: true,
		AllowLocal:  allowLocal,
	}
	p.opts = opts
	if err := p.formats(o.Formats, version); err != nil {
		return nil, err
	}
	if p.want.links {
		// Firecrawl's links are every link of the page.
		opts.ExtractLinks, opts.LinksFull = true, true
	}
	if o.OnlyMainContent != nil && !*o.OnlyMainContent {
		opts.Profile = distillv1.Profile_PROFILE_FULL
	}
	if len(o.IncludeTags) > 0 {
		sel := strings.Join(o.IncludeTags, ", ")
		if err := extract.CheckSelector(sel); err != nil {
			return nil, badRequest("includeTags: %v", err)
		}
		opts.IncludeTags = o.IncludeTags
	}
	if len(o.ExcludeTags) > 0 {
		sel := strings.Join(o.ExcludeTags, ", ")
		if err := extract.CheckSelector(sel); err != nil {
			return nil, badRequest("excludeTags: %v", err)
		}
		opts.ExcludeTags = o.ExcludeTags
	}
	if o.WaitFor != nil {
		switch {
		case *o.WaitFor < 0 || *o.WaitFor > maxWaitForMS:
			return nil, badRequest("waitFor must be between 0 and %d milliseconds, got %d", maxWaitForMS, *o.WaitFor)
		case *o.WaitFor > 0:
			// distill renders only the pages that need it; waitFor is
			// how long such a render may wait for the page to settle.
			w := int32(*o.WaitFor)
			opts.JsWait = &w
		}
	}
	if o.Timeout != nil {
		if *o.Timeout < minTimeoutMS {
			return nil, badRequest("timeout must be at least %d milliseconds, got %d", minTimeoutMS, *o.Timeout)
		}
		secs := int32(min((*o.Timeout+999)/1000, 1<<30))
		opts.TimeoutSecs = &secs
	}
	switch {
	case o.MaxAge == nil:
	case *o.MaxAge < 0:
		return nil, badRequest("maxAge cannot be negative, got %d", *o.MaxAge)
	case *o.MaxAge == 0:
		opts.NoCache = true
	default:
		ttl := max(*o.MaxAge/1000, 1)
		opts.CacheTtl = &ttl
	}
	if o.StoreInCache != nil && !*o.StoreInCache || o.ZeroDataRetention != nil && *o.ZeroDataRetention {
		// Keeping nothing is what both ask; distill's cache has no
		// write-only mode, so the page is neither read from it nor kept.
		opts.NoCache = true
	}
	if err := p.actions(o.Actions); err != nil {
		return nil, err
	}
	if err := p.headers(o.Headers); err != nil {
		return nil, err
	}
	if o.Mobile != nil && *o.Mobile {
		return nil, notSupported("mobile", "")
	}
	if o.Lockdown != nil && *o.Lockdown {
		return nil, notSupported("lockdown", "")
	}
	if !isNull(o.RedactPII) && string(o.RedactPII) != "false" {
		return nil, notSupported("redactPII", "")
	}
	if !isNull(o.Profile) {
		return nil, notSupported("profile", "distill keeps no browser profiles between requests")
	}
	if o.UseMock != "" {
		return nil, notSupported("useMock", "")
	}
	if err := threatProtection(o.ThreatProtection); err != nil {
		return nil, err
	}
	if o.DomainTools != nil && *o.DomainTools {
		return nil, notSupported("domainTools", "")
	}
	if o.SafeMode != nil && *o.SafeMode {
		// A protection the caller asks for is refused, not pretended.
		return nil, notSupported("safeMode", "")
	}
	if err := p.v1JSON(o, version); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"changeTrackingOptions", o.ChangeTrackingOptions}, {"agent", o.Agent}} {
		if !isNull(f.raw) {
			return nil, notSupported(f.name, "")
		}
	}
	if err := p.parsers(o.Parsers); err != nil {
		return nil, err
	}
	if o.ParsePDF != nil && !*o.ParsePDF {
		p.pdf = false
	}
	if !isNull(o.Location) {
		p.warn("location is ignored: distill fetches from where it runs")
	}
	if o.SkipTLSVerification != nil && *o.SkipTLSVerification {
		p.warn("skipTlsVerification is ignored: distill always verifies TLS certificates")
	}
	switch o.Proxy {
	case "", "basic", "auto":
	default:
		p.warn(fmt.Sprintf("proxy %q is ignored: distill fetches directly, under its network policy", o.Proxy))
	}
	if o.MinAge != nil {
		p.warn("minAge is ignored: distill answers from its cache while the page is fresh, else fetches it")
	}
	if o.OnlyCleanContent != nil && *o.OnlyCleanContent {
		p.warn("onlyCleanContent is ignored: distill's Markdown is its own cleaning")
	}
	// Firecrawl's defaults (true, true, false) are what distill does; the
	// other way round it cannot.
	if o.RemoveBase64Images != nil && !*o.RemoveBase64Images {
		p.warn("removeBase64Images: false is ignored: distill's Markdown and HTML never hold base64 images")
	}
	if o.BlockAds != nil && !*o.BlockAds {
		p.warn("blockAds: false is ignored: distill's reader drops adverts and cookie banners")
	}
	if o.FastMode != nil && *o.FastMode {
		p.warn("fastMode is ignored: distill reads every page the same way")
	}
	p.readsPage()
	return p, nil
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
