package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaKeywords are the only JSON Schema keywords a host's extraction
// schema may use: enough to shape data, nothing that reaches out ($ref,
// $id) or runs arbitrary logic (extensions, patterns).
var schemaKeywords = []string{
	"type", "description", "properties", "required", "items", "enum",
	"additionalProperties", "title", "minimum", "maximum", "minLength",
	"maxLength", "minItems", "maxItems", "format", "default",
}

// SchemaLimits bound an extraction schema.
type SchemaLimits struct {
	MaxDepth      int // nesting of schemas, the root being 1
	MaxProperties int // properties of the root object
	MaxBytes      int // compact JSON encoding
}

// Schema is a host's extraction schema, checked and compiled.
type Schema struct {
	// Raw is the schema's compact JSON, as providers are sent it.
	Raw       json.RawMessage
	compiled  *jsonschema.Schema
	rootProps int
}

// ErrSchema matches every refusal of a schema.
var ErrSchema = errors.New("schema refused")

func schemaErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSchema, fmt.Sprintf(format, args...))
}

// CompileSchema checks raw against the limits and the keyword list and
// compiles it with a JSON Schema validator that loads nothing remote.
func CompileSchema(raw []byte, lim SchemaLimits) (*Schema, error) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return nil, schemaErr("not JSON: %v", err)
	}
	if compact.Len() > lim.MaxBytes {
		return nil, schemaErr("%d bytes, over max_schema_bytes %d", compact.Len(), lim.MaxBytes)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(compact.Bytes()))
	if err != nil {
		return nil, schemaErr("not JSON: %v", err)
	}
	root, ok := doc.(map[string]any)
	if !ok || root["type"] != "object" {
		return nil, schemaErr(`the root must be an object schema ({"type": "object", ...})`)
	}
	if err := walkSchema(root, "", 1, lim.MaxDepth); err != nil {
		return nil, err
	}
	props, _ := root["properties"].(map[string]any)
	if len(props) > lim.MaxProperties {
		return nil, schemaErr("%d root properties, over max_schema_properties %d", len(props), lim.MaxProperties)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(refuseLoader{})
	if err := c.AddResource("host:schema", doc); err != nil {
		return nil, schemaErr("%v", err)
	}
	compiled, err := c.Compile("host:schema")
	if err != nil {
		return nil, schemaErr("%v", oneLine(err))
	}
	return &Schema{Raw: compact.Bytes(), compiled: compiled, rootProps: len(props)}, nil
}

// walkSchema refuses keywords off the list and nesting deeper than max.
func walkSchema(s map[string]any, at string, depth, max int) error {
	if depth > max {
		return schemaErr("%s nests deeper than max_schema_depth %d", where(at), max)
	}
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !slices.Contains(schemaKeywords, k) {
			return schemaErr("%s uses %q, which is not an allowed keyword (allowed: %v)", where(at), k, schemaKeywords)
		}
		switch k {
		case "properties":
			props, ok := s[k].(map[string]any)
			if !ok {
				return schemaErr("%s: properties is not an object", where(at))
			}
			names := make([]string, 0, len(props))
			for n := range props {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				sub, ok := props[n].(map[string]any)
				if !ok {
					return schemaErr("%s: property %q is not a schema object", where(at), n)
				}
				if err := walkSchema(sub, at+"/properties/"+n, depth+1, max); err != nil {
					return err
				}
			}
		case "items", "additionalProperties":
			switch sub := s[k].(type) {
			case bool:
			case map[string]any:
				if err := walkSchema(sub, at+"/"+k, depth+1, max); err != nil {
					return err
				}
			default:
				return schemaErr("%s: %s is not a schema", where(at), k)
			}
		}
	}
	return nil
}

func where(at string) string {
	if at == "" {
		return "the root"
	}
	return at
}

// refuseLoader loads no schema: every reference outside the document is
// refused.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("remote schema %s refused", url)
}

// Validate checks data against the schema.
func (s *Schema) Validate(data any) error {
	if err := s.compiled.Validate(data); err != nil {
		return errors.New(oneLine(err))
	}
	return nil
}

// oneLine joins a validator's indented report into one line.
func oneLine(err error) string {
	var parts []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}

// About is what the schema says of itself, in one line: its title and
// description, and the names of its root properties, the fields the data
// will have. They are the host's words, which a tool built on the schema
// may show the model; a change to any of them changes the tool.
func (s *Schema) About() string {
	var top struct {
		Title       string                     `json:"title"`
		Description string                     `json:"description"`
		Properties  map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(s.Raw, &top) != nil {
		return ""
	}
	var parts []string
	for _, p := range []string{top.Title, top.Description} {
		if p = strings.Join(strings.Fields(p), " "); p != "" {
			parts = append(parts, strings.TrimSuffix(p, "."))
		}
	}
	about := strings.Join(parts, ": ")
	if r := []rune(about); len(r) > maxAbout {
		about = string(r[:maxAbout-1]) + "…"
	}
	if len(top.Properties) > 0 {
		names := slices.Sorted(maps.Keys(top.Properties))
		if len(names) > maxAboutFields {
			names = append(names[:maxAboutFields], "…")
		}
		if about != "" {
			about += "; "
		}
		about += "fields " + strings.Join(names, ", ")
	}
	return about
}

// maxAbout and maxAboutFields keep a schema's words in a tool
// description short.
const (
	maxAbout       = 200
	maxAboutFields = 16
)
