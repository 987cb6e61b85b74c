package firecrawl

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"distill.dev/gateway/host"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// Host runs the work that needs a language model (the json and summary
// formats, extract) under host mode's policy: an actor's allowlist,
// budgets, result limits and provider. A *host.Engine is one.
type Host interface {
	ExtractWith(ctx context.Context, who host.Who, schema json.RawMessage, in host.Input) *host.Envelope
	Extract(ctx context.Context, who host.Who, schema string, in host.Input) *host.Envelope
	Summarize(ctx context.Context, who host.Who, in host.Input) *host.Envelope
	// Policies names the actors of the tokens, and their schemas.
	Policies() *host.Policies
}

// anyObject is the schema of a json format or an extract given a prompt
// alone: any JSON object.
var anyObject = []byte(`{"type":"object"}`)

// jsonFormat is a request for data in the shape of schema, or as prompt
// describes it.
type jsonFormat struct {
	schema []byte
	prompt string
}

// readJSONFormat reads {type: "json", schema, prompt} (v1's jsonOptions
// and extract too).
func readJSONFormat(raw json.RawMessage, field string) (*jsonFormat, *apiError) {
	var f struct {
		Type         string          `json:"type"`
		Schema       json.RawMessage `json:"schema"`
		Prompt       string          `json:"prompt"`
		SystemPrompt string          `json:"systemPrompt"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, badRequest("%s: %s", field, jsonMessage(err))
	}
	if f.SystemPrompt != "" {
		return nil, notSupported(field+": systemPrompt", "the host's system prompt is its own")
	}
	if isNull(f.Schema) && f.Prompt == "" {
		return nil, badRequest("%s: needs a schema or a prompt", field)
	}
	out := &jsonFormat{schema: anyObject, prompt: f.Prompt}
	if !isNull(f.Schema) {
		out.schema = f.Schema
	}
	return out, nil
}

// extractFor asks the host for data in schema's shape, as c: given
// inline, as the gRPC door lets an operator give it; for an actor's
// token, which may give no schema of its own there, by the name of the
// actor's schema that is the same JSON.
func (s *Server) extractFor(ctx context.Context, c caller, run string, schema []byte, in host.Input) *host.Envelope {
	if !c.scoped {
		return s.cfg.Host.ExtractWith(ctx, s.who(c, run), schema, in)
	}
	name, ok := s.actorSchema(c.actor, schema)
	if !ok {
		return host.Refuse(host.NotAuthorized, "an actor's token may ask only for a schema its host policy names: send one of them, the same JSON, as the schema")
	}
	return s.cfg.Host.Extract(ctx, s.who(c, run), name, in)
}

// actorSchema is the name of actor's schema that is the same JSON as raw.
func (s *Server) actorSchema(actor string, raw []byte) (string, bool) {
	a, ok := s.cfg.Host.Policies().Current().Actor(actor)
	if !ok {
		return "", false
	}
	var want any
	if json.Unmarshal(raw, &want) != nil {
		return "", false
	}
	names := slices.Sorted(maps.Keys(a.Schemas))
	for _, name := range names {
		var have any
		if json.Unmarshal(a.Schemas[name].Raw, &have) == nil && reflect.DeepEqual(have, want) {
			return name, true
		}
	}
	return "", false
}

// needsHost refuses field when no host engine runs the model work.
func (s *Server) needsHost(field string) *apiError {
	if s.cfg.Host == nil {
		return notSupported(field, "this server runs no language model (serve --policy with a provider, as host mode's extract)")
	}
	return nil
}

// checkModelWork refuses the json and summary formats when no host runs
// them.
func (s *Server) checkModelWork(p *plan) *apiError {
	for _, f := range []struct {
		name string
		on   bool
	}{{"formats: json", p.json != nil}, {"formats: summary", p.want.summary}} {
		if f.on {
			if err := s.needsHost(f.name); err != nil {
				return err
			}
		}
	}
	return nil
}

// jobDocument is the document of one page of a batch or a crawl: the
// formats, then the model's work. p is only read, as the job's pages
// share it.
func (s *Server) jobDocument(ctx context.Context, c caller, p *plan, sourceURL string, d *distillv1.Distilled) (*document, *apiError) {
	doc, err := p.document(sourceURL, d)
	if err != nil {
		return nil, err
	}
	target := d.GetFinalUrl()
	if target == "" {
		target = sourceURL
	}
	if err := s.modelWork(ctx, c, doc.Metadata.ScrapeID, p, target, doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// modelWork runs the json and summary formats for the page at url and
// puts their answers in doc. The host reads the page itself, under its
// policy: from the cache when the scrape just stored it.
func (s *Server) modelWork(ctx context.Context, c caller, run string, p *plan, url string, doc *document) *apiError {
	if p.json != nil {
		env := s.extractFor(ctx, c, run, p.json.schema, host.Input{URL: url, Instruction: p.json.prompt})
		if err := envelopeError("formats: json", env); err != nil {
			return err
		}
		if p.want.v1JSON == "extract" {
			doc.Extract = env.Data
		} else {
			doc.JSON = env.Data
		}
		if env.Truncated {
			doc.addWarning("json: cut to the host's result limit")
		}
	}
	if p.want.summary {
		env := s.cfg.Host.Summarize(ctx, s.who(c, run), host.Input{URL: url})
		if err := envelopeError("formats: summary", env); err != nil {
			return err
		}
		text, _ := env.Data.(string)
		doc.Summary = &text
		if env.Truncated {
			doc.addWarning("summary: cut to the host's result limit")
		}
	}
	return nil
}

// envelopeError is a failed envelope in Firecrawl's terms: its safe code
// and message, under field.
func envelopeError(field string, env *host.Envelope) *apiError {
	if env.OK() {
		return nil
	}
	code, msg := host.ProviderError, "no answer"
	if env.Error != nil {
		code, msg = env.Error.Code, env.Error.Message
	}
	e := &apiError{status: http.StatusInternalServerError, code: string(code), msg: field + ": " + msg}
	switch code {
	case host.InvalidInput:
		e.status = http.StatusBadRequest
	case host.NotAuthorized:
		e.status = http.StatusForbidden
	case host.UnsupportedSecurityCapability:
		e.status = http.StatusBadRequest
	case host.BudgetExhausted:
		e.status, e.retryAfter = http.StatusTooManyRequests, 5*time.Second
	case host.ProviderError:
		e.status = http.StatusBadGateway
	}
	return e
}

// extractRequest is POST /v{1,2}/extract.
type extractRequest struct {
	URLs               []string        `json:"urls"`
	Prompt             string          `json:"prompt"`
	Schema             json.RawMessage `json:"schema"`
	SystemPrompt       string          `json:"systemPrompt"`
	AllowExternalLinks *bool           `json:"allowExternalLinks"`
	EnableWebSearch    *bool           `json:"enableWebSearch"`
	IncludeSubdomains  *bool           `json:"includeSubdomains"`
	ShowSources        *bool           `json:"showSources"`
	IgnoreInvalidURLs  *bool           `json:"ignoreInvalidURLs"`
	ScrapeOptions      json.RawMessage `json:"scrapeOptions"`
	Webhook            json.RawMessage `json:"webhook"`
	Agent              json.RawMessage `json:"agent"`
	Origin             string          `json:"origin"`
	Integration        json.RawMessage `json:"integration"`
	ThreatProtection   json.RawMessage `json:"threatProtection"`
	AuditMetadata      json.RawMessage `json:"auditMetadata"`
}

// maxExtractURLs bounds the pages one extract reads: each is a model
// call.
const maxExtractURLs = 10

// startExtract starts an extract job: it checks the request, keeps the
// urls it can read and answers with the job's id, while runExtract asks
// the host for each page's data.
func (s *Server) startExtract(w http.ResponseWriter, r *http.Request, version int) {
	var req extractRequest
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	if err := s.needsHost("extract"); err != nil {
		writeError(w, err)
		return
	}
	if err := req.check(); err != nil {
		writeError(w, err)
		return
	}
	urls, invalid, err := req.targets()
	if err != nil {
		writeError(w, err)
		return
	}
	hook, err := s.parseWebhook(req.Webhook)
	if err != nil {
		writeError(w, err)
		return
	}
	schema := []byte(req.Schema)
	if isNull(req.Schema) {
		schema = anyObject
	}
	if err := s.jobs.admit(r.Context()); err != nil {
		writeError(w, err)
		return
	}
	j := &run{id: newID(), kind: kindExtract, caller: s.callerOf(r)}
	if err := s.jobs.create(r.Context(), j.id, jobRecord{Kind: kindExtract, Status: stateProcessing}); err != nil {
		s.jobs.finished()
		writeError(w, fromFailure(err))
		return
	}
	if hook != nil {
		j.hook = s.newWebhookSender(hook, kindExtract)
	}
	go s.runExtract(s.ctx, j, urls, schema, req.Prompt)
	out := map[string]any{"success": true, "id": j.id, "url": statusURL(r, "/v"+strconv.Itoa(version)+"/extract/"+j.id)}
	if len(invalid) > 0 {
		out["invalidURLs"] = invalid
	}
	writeJSON(w, http.StatusOK, out)
}

// check refuses an extract without urls, with too many, without a schema
// or a prompt, or with an option distill does not honour.
func (req *extractRequest) check() *apiError {
	switch {
	case len(req.URLs) == 0:
		return badRequest("Bad Request: urls is required (distill does not search the web for them)")
	case len(req.URLs) > maxExtractURLs:
		return badRequest("Bad Request: an extract reads at most %d urls, got %d", maxExtractURLs, len(req.URLs))
	case isNull(req.Schema) && req.Prompt == "":
		return badRequest("Bad Request: extract needs a schema or a prompt")
	}
	for _, f := range []struct {
		name, why string
		on        bool
	}{
		{"systemPrompt", "the host's system prompt is its own", req.SystemPrompt != ""},
		{"enableWebSearch", "distill does not search the web", on(req.EnableWebSearch)},
		{"allowExternalLinks", "an extract reads the urls given", on(req.AllowExternalLinks)},
		{"showSources", "", on(req.ShowSources)},
		{"scrapeOptions", "the host reads each page with its own options", !isNull(req.ScrapeOptions)},
		{"agent", "", !isNull(req.Agent)},
	} {
		if f.on {
			return notSupported(f.name, f.why)
		}
	}
	return threatProtection(req.ThreatProtection)
}

// targets are the urls to read, and the invalid ones skipped when
// ignoreInvalidURLs says to; a wildcard is refused.
func (req *extractRequest) targets() (urls, invalid []string, err *apiError) {
	ignoreInvalid := on(req.IgnoreInvalidURLs)
	for _, raw := range req.URLs {
		if strings.Contains(raw, "*") {
			return nil, nil, notSupported("urls: "+raw, "a wildcard asks for a crawl; crawl the site, then extract from its pages")
		}
		target, ok := validURL(raw)
		if !ok {
			if !ignoreInvalid {
				return nil, nil, badRequest("Bad Request: invalid URL %q (set ignoreInvalidURLs to skip it)", raw)
			}
			invalid = append(invalid, raw)
			continue
		}
		urls = append(urls, target)
	}
	if len(urls) == 0 {
		return nil, nil, badRequest("Bad Request: none of the urls is valid")
	}
	return urls, invalid, nil
}

// runExtract asks the host for each page's data, in turn, and merges
// them.
func (s *Server) runExtract(ctx context.Context, j *run, urls []string, schema []byte, prompt string) {
	defer s.jobs.finished()
	defer j.hook.close()
	j.hook.send("started", webhookEvent{Success: true, ID: j.id})
	var merged map[string]any
	var warnings []string
	var failed *apiError
	for i, u := range urls {
		env := s.extractFor(ctx, j.caller, j.id+"-"+strconv.Itoa(i), schema, host.Input{URL: u, Instruction: prompt})
		if err := envelopeError("extract "+u, env); err != nil {
			failed = err
			break
		}
		if env.Truncated {
			warnings = append(warnings, "extract "+u+": cut to the host's result limit")
		}
		data, _ := env.Data.(map[string]any)
		merged = mergeData(merged, data)
	}
	_, err := s.jobs.update(context.WithoutCancel(ctx), j.id, func(r *jobRecord) bool {
		r.Ended = true
		if failed != nil {
			r.Status, r.Failure = stateFailed, failed.msg
		} else {
			r.Status, r.Extracted, r.Warnings = stateCompleted, merged, warnings
		}
		return true
	})
	if err != nil {
		s.logger.Warn("firecrawl extract: its end not kept", "id", j.id, "err", err)
	}
	if failed != nil {
		j.hook.send("failed", webhookEvent{ID: j.id, Error: failed.msg})
		return
	}
	j.hook.send("completed", webhookEvent{Success: true, ID: j.id, Data: []any{merged}})
}

// mergeData folds one page's data into what the pages before it gave:
// lists are joined, objects merged, and a value already found is kept.
func mergeData(into, from map[string]any) map[string]any {
	if into == nil {
		return from
	}
	for k, v := range from {
		switch old := into[k].(type) {
		case nil:
			into[k] = v
		case []any:
			if more, ok := v.([]any); ok {
				into[k] = append(old, more...)
			}
		case map[string]any:
			if more, ok := v.(map[string]any); ok {
				into[k] = mergeData(old, more)
			}
		}
	}
	return into
}

// extractStatus is GET /v{1,2}/extract/{id}.
func (s *Server) extractStatus(w http.ResponseWriter, r *http.Request) {
	rec, aerr := s.jobs.get(r.Context(), r.PathValue("id"))
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	if rec == nil || rec.Kind != kindExtract {
		writeError(w, &apiError{status: http.StatusNotFound, msg: "Extract job not found"})
		return
	}
	out := map[string]any{
		"success": rec.Status != stateFailed, "status": rec.Status,
		"expiresAt": rec.Expires.UTC().Format(time.RFC3339),
	}
	if rec.Status == stateCompleted {
		out["data"] = rec.Extracted
	}
	if rec.Failure != "" {
		out["error"] = rec.Failure
	}
	if len(rec.Warnings) > 0 {
		out["warning"] = joinWarnings(rec.Warnings)
	}
	writeJSON(w, http.StatusOK, out)
}
