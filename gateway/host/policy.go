// Package host is distill's host mode: a platform that runs agents for
// many users decides, in a policy file, what each actor may browse, with
// which budget and which extraction schemas; the model only asks. Every
// answer is a result envelope whose errors carry one of a few safe codes.
package host

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"distill.dev/services/platform/grpcauth"
	"distill.dev/services/platform/netpolicy"
)

// DefaultActor is who the CLI and the stdio MCP server run as: their user
// is the operator, and carries no token.
const DefaultActor = "default"

// The policy's defaults, the seed's numbers.
const (
	DefaultMaxResultBytes      = 65536
	DefaultMaxSchemaDepth      = 8
	DefaultMaxSchemaProperties = 64
	DefaultMaxSchemaBytes      = 16384

	DefaultMaxSeconds    = 60
	DefaultMaxSteps      = 12
	DefaultMaxBytes      = 262144
	DefaultMaxConcurrent = 1

	// maxPolicyFileBytes keeps a mistaken path (a log, a binary) from
	// being read whole.
	maxPolicyFileBytes = 1 << 20
)

// fileSpec is the policy file as written.
type fileSpec struct {
	// Defaults are what every actor has unless it says otherwise (the
	// seed's process defaults): limits, budget, schemes, ports, words,
	// never hosts or schemas, which are each actor's own.
	Defaults *actorSpec           `json:"defaults"`
	Actors   map[string]actorSpec `json:"actors"`
	Tokens   []tokenSpec          `json:"tokens"`
}

type actorSpec struct {
	AllowedHosts        []string                   `json:"allowed_hosts"`
	AllowedSchemes      []string                   `json:"allowed_schemes"`
	AllowedPorts        []int                      `json:"allowed_ports"`
	AssetOrigins        []string                   `json:"asset_origins"`
	VerifyDNS           *bool                      `json:"verify_dns"`
	MaxResultBytes      *int                       `json:"max_result_bytes"`
	MaxSchemaDepth      *int                       `json:"max_schema_depth"`
	MaxSchemaProperties *int                       `json:"max_schema_properties"`
	MaxSchemaBytes      *int                       `json:"max_schema_bytes"`
	Budget              budgetSpec                 `json:"budget"`
	Schemas             map[string]json.RawMessage `json:"schemas"`
	ActRefusedWords     *[]string                  `json:"act_refused_words"`
}

type budgetSpec struct {
	MaxSeconds    *int     `json:"max_seconds"`
	MaxSteps      *int     `json:"max_steps"`
	MaxBytes      *int     `json:"max_bytes"`
	MaxConcurrent *int     `json:"max_concurrent"`
	MaxCostUSD    *float64 `json:"max_cost_usd"`
}

type tokenSpec struct {
	TokenEnv string `json:"token_env"`
	Actor    string `json:"actor"`
}

// Policy is a loaded, checked policy file.
type Policy struct {
	actors map[string]*Actor
	// tokens maps each token (read from its variable) to its actor.
	tokens map[string]string
}

// Actor is what one actor may do.
type Actor struct {
	Name      string
	Allowlist *netpolicy.Allowlist
	VerifyDNS bool
	MaxResult int
	Budget    Budget
	Schemas   map[string]*Schema
	// ActRefusedWords are refused in act's selector and description,
	// lower-case.
	ActRefusedWords []string
	schemaLims      SchemaLimits
}

// Budget bounds one run of an actor; MaxConcurrent bounds the actor's
// calls in flight across all its runs.
type Budget struct {
	MaxSeconds    int      `json:"max_seconds"`
	MaxSteps      int      `json:"max_steps"`
	MaxBytes      int      `json:"max_bytes"`
	MaxConcurrent int      `json:"max_concurrent"`
	MaxCostUSD    *float64 `json:"max_cost_usd,omitempty"` // advisory: reported, never enforced
}

// Duration is MaxSeconds as a duration.
func (b Budget) Duration() time.Duration { return time.Duration(b.MaxSeconds) * time.Second }

var (
	actorName  = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,63}$`)
	schemaName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,47}$`)
)

// Load reads and checks the policy file at path; lookup reads the token
// variables it names (os.LookupEnv in the mains). Every error is one line
// naming the file and the key at fault.
func Load(path string, lookup func(string) (string, bool)) (*Policy, error) {
	p, err := load(path, lookup)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", path, err)
	}
	return p, nil
}

func load(path string, lookup func(string) (string, bool)) (*Policy, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, maxPolicyFileBytes+1)); err != nil {
		return nil, err
	}
	if buf.Len() > maxPolicyFileBytes {
		return nil, fmt.Errorf("over %d bytes", maxPolicyFileBytes)
	}
	return Parse(buf.Bytes(), lookup)
}

// Parse reads a policy from YAML or JSON (JSON is YAML).
func Parse(b []byte, lookup func(string) (string, bool)) (*Policy, error) {
	js, err := yaml.YAMLToJSON(b)
	if err != nil {
		return nil, fmt.Errorf("not YAML or JSON: %v", oneLine(err))
	}
	var spec fileSpec
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		return nil, fmt.Errorf("%s", jsonErr(err))
	}
	if len(spec.Actors) == 0 {
		return nil, errors.New("actors: none; name at least one (the CLI and stdio MCP run as \"default\")")
	}
	p := &Policy{actors: map[string]*Actor{}, tokens: map[string]string{}}
	names := make([]string, 0, len(spec.Actors))
	for n := range spec.Actors {
		names = append(names, n)
	}
	sort.Strings(names)
	if d := spec.Defaults; d != nil && (len(d.AllowedHosts) > 0 || len(d.Schemas) > 0) {
		return nil, errors.New("defaults: allowed_hosts and schemas are each actor's own, never defaults")
	}
	for _, n := range names {
		a, err := newActor(n, withDefaults(spec.Actors[n], spec.Defaults))
		if err != nil {
			return nil, fmt.Errorf("actors.%s: %w", n, err)
		}
		p.actors[n] = a
	}
	for i, t := range spec.Tokens {
		at := fmt.Sprintf("tokens[%d]", i)
		if t.TokenEnv == "" {
			return nil, fmt.Errorf("%s: token_env is empty: name the variable holding the token", at)
		}
		if _, ok := p.actors[t.Actor]; !ok {
			return nil, fmt.Errorf("%s: actor %q is not under actors", at, t.Actor)
		}
		v, ok := lookup(t.TokenEnv)
		if !ok || v == "" {
			return nil, fmt.Errorf("%s: variable %s is not set", at, t.TokenEnv)
		}
		if prev, dup := p.tokens[v]; dup && prev != t.Actor {
			return nil, fmt.Errorf("%s: the token in %s is already %s's", at, t.TokenEnv, prev)
		}
		p.tokens[v] = t.Actor
	}
	if _, err := grpcauth.NewNames(p.tokens); err != nil {
		return nil, fmt.Errorf("tokens: %w", err)
	}
	return p, nil
}

func newActor(name string, s actorSpec) (*Actor, error) {
	if !actorName.MatchString(name) {
		return nil, errors.New("an actor's name is 1-64 letters, digits, '_', '.' or '-'")
	}
	if len(s.AllowedHosts) == 0 {
		return nil, errors.New("allowed_hosts is empty: this actor could browse nothing")
	}
	al, err := netpolicy.NewAllowlist(s.AllowedHosts, s.AllowedSchemes, s.AllowedPorts)
	if err != nil {
		return nil, err
	}
	// A page's CDN: its subresources load in a render, nothing else.
	if al, err = al.WithAssetOrigins(s.AssetOrigins); err != nil {
		return nil, fmt.Errorf("asset_origins: %w", err)
	}
	a := &Actor{Name: name, Allowlist: al, VerifyDNS: true, Schemas: map[string]*Schema{}}
	if s.VerifyDNS != nil {
		a.VerifyDNS = *s.VerifyDNS
	}
	var errs []error
	pos := func(key string, v *int, def int) int {
		if v == nil {
			return def
		}
		if *v < 1 {
			errs = append(errs, fmt.Errorf("%s: %d, want a positive number", key, *v))
		}
		return *v
	}
	a.MaxResult = pos("max_result_bytes", s.MaxResultBytes, DefaultMaxResultBytes)
	a.schemaLims = SchemaLimits{
		MaxDepth:      pos("max_schema_depth", s.MaxSchemaDepth, DefaultMaxSchemaDepth),
		MaxProperties: pos("max_schema_properties", s.MaxSchemaProperties, DefaultMaxSchemaProperties),
		MaxBytes:      pos("max_schema_bytes", s.MaxSchemaBytes, DefaultMaxSchemaBytes),
	}
	a.Budget = Budget{
		MaxSeconds:    pos("budget.max_seconds", s.Budget.MaxSeconds, DefaultMaxSeconds),
		MaxSteps:      pos("budget.max_steps", s.Budget.MaxSteps, DefaultMaxSteps),
		MaxBytes:      pos("budget.max_bytes", s.Budget.MaxBytes, DefaultMaxBytes),
		MaxConcurrent: pos("budget.max_concurrent", s.Budget.MaxConcurrent, DefaultMaxConcurrent),
		MaxCostUSD:    s.Budget.MaxCostUSD,
	}
	if c := s.Budget.MaxCostUSD; c != nil && *c < 0 {
		errs = append(errs, fmt.Errorf("budget.max_cost_usd: %v, want zero or more", *c))
	}
	a.ActRefusedWords = DefaultActRefusedWords()
	if s.ActRefusedWords != nil {
		a.ActRefusedWords = nil
		for _, w := range *s.ActRefusedWords {
			if w = strings.ToLower(strings.TrimSpace(w)); w == "" {
				errs = append(errs, errors.New("act_refused_words: an empty word would refuse every action"))
			}
			a.ActRefusedWords = append(a.ActRefusedWords, w)
		}
	}
	if len(errs) > 0 {
		return nil, errs[0]
	}
	names := make([]string, 0, len(s.Schemas))
	for n := range s.Schemas {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !schemaName.MatchString(n) {
			return nil, fmt.Errorf("schemas.%s: a schema's name is 1-48 lower-case letters, digits or '_', starting with a letter (it names the tool extract_<name>)", n)
		}
		sc, err := CompileSchema(s.Schemas[n], a.schemaLims)
		if err != nil {
			return nil, fmt.Errorf("schemas.%s: %w", n, err)
		}
		a.Schemas[n] = sc
	}
	return a, nil
}

// withDefaults fills what s leaves unset from d.
func withDefaults(s actorSpec, d *actorSpec) actorSpec {
	if d == nil {
		return s
	}
	pick := func(v, def *int) *int {
		if v == nil {
			return def
		}
		return v
	}
	if s.AllowedSchemes == nil {
		s.AllowedSchemes = d.AllowedSchemes
	}
	if s.AllowedPorts == nil {
		s.AllowedPorts = d.AllowedPorts
	}
	if s.AssetOrigins == nil {
		s.AssetOrigins = d.AssetOrigins
	}
	if s.VerifyDNS == nil {
		s.VerifyDNS = d.VerifyDNS
	}
	if s.ActRefusedWords == nil {
		s.ActRefusedWords = d.ActRefusedWords
	}
	s.MaxResultBytes = pick(s.MaxResultBytes, d.MaxResultBytes)
	s.MaxSchemaDepth = pick(s.MaxSchemaDepth, d.MaxSchemaDepth)
	s.MaxSchemaProperties = pick(s.MaxSchemaProperties, d.MaxSchemaProperties)
	s.MaxSchemaBytes = pick(s.MaxSchemaBytes, d.MaxSchemaBytes)
	s.Budget.MaxSeconds = pick(s.Budget.MaxSeconds, d.Budget.MaxSeconds)
	s.Budget.MaxSteps = pick(s.Budget.MaxSteps, d.Budget.MaxSteps)
	s.Budget.MaxBytes = pick(s.Budget.MaxBytes, d.Budget.MaxBytes)
	s.Budget.MaxConcurrent = pick(s.Budget.MaxConcurrent, d.Budget.MaxConcurrent)
	if s.Budget.MaxCostUSD == nil {
		s.Budget.MaxCostUSD = d.Budget.MaxCostUSD
	}
	return s
}

// jsonErr names the key a decoding error is about.
func jsonErr(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s: %s where %s was expected", te.Field, te.Value, te.Type)
	}
	return err.Error()
}

// Actor returns the policy of the actor named, or false.
func (p *Policy) Actor(name string) (*Actor, bool) {
	a, ok := p.actors[name]
	return a, ok
}

// Actors lists the actors' names, sorted.
func (p *Policy) Actors() []string {
	out := make([]string, 0, len(p.actors))
	for n := range p.actors {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Tokens returns the API tokens the policy names, for the server's guard
// to admit.
func (p *Policy) Tokens() []string {
	out := make([]string, 0, len(p.tokens))
	for t := range p.tokens {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Names tells the actor of a call's token.
func (p *Policy) Names() *grpcauth.Names {
	n, _ := grpcauth.NewNames(p.tokens) // checked in Parse
	return n
}

// ActorOf names the actor of an API token, as a door that reads the token
// itself (MCP over HTTP) needs. Every token is compared, in constant time,
// so the time taken does not say which matched.
func (p *Policy) ActorOf(token string) (string, bool) {
	d := sha256.Sum256([]byte(token))
	name, found := "", false
	for t, actor := range p.tokens {
		td := sha256.Sum256([]byte(t))
		if subtle.ConstantTimeCompare(d[:], td[:]) == 1 {
			name, found = actor, true
		}
	}
	return name, found
}
