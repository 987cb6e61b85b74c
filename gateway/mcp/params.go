package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"google.golang.org/protobuf/reflect/protoreflect"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// kind is what a parameter holds once decoded.
type kind int

const (
	kindString kind = iota
	kindEnum        // a string naming a value of a proto enum
	kindBool
	kindInt32
	kindInt64
	kindNumber
	kindStrings    // an array of strings
	kindFormValues // an object of field name to value(s)
	kindFields     // an object of record field name to selector, in order
	kindJSONArray  // a JSON array, or a string holding one; kept as its JSON text
	kindStringMap  // an object of names to strings
)

// param is one tool parameter: its schema, and how its value is decoded.
// Models often send numbers and booleans as strings ("20", "true"), so
// those kinds accept either and say so in their schema.
type param struct {
	name     string
	kind     kind
	desc     string
	required bool
	// def is the default as JSON, shown in the schema; nil when the public
	// surface gives none.
	def json.RawMessage
	// enum lists a kindEnum's proto values.
	enum protoreflect.EnumDescriptor
}

func (p param) schema() *jsonschema.Schema {
	s := &jsonschema.Schema{Description: p.desc, Default: p.def}
	switch p.kind {
	case kindString:
		s.Type = "string"
	case kindEnum:
		s.Type = "string"
		for _, name := range enumNames(p.enum) {
			s.Enum = append(s.Enum, name)
		}
	case kindBool:
		s.Types = []string{"boolean", "string"}
	case kindInt32, kindInt64:
		s.Types = []string{"integer", "string"}
	case kindNumber:
		s.Types = []string{"number", "string"}
	case kindStrings:
		s.Type = "array"
		s.Items = &jsonschema.Schema{Type: "string"}
	case kindFields, kindStringMap:
		s.Type = "object"
		s.AdditionalProperties = &jsonschema.Schema{Type: "string"}
	case kindFormValues:
		s.Type = "object"
		s.AdditionalProperties = &jsonschema.Schema{Types: []string{"string", "number", "boolean", "array"}, Items: &jsonschema.Schema{Type: "string"}}
	case kindJSONArray:
		s.Types = []string{"array", "string"}
		s.Items = &jsonschema.Schema{Type: "object"}
	}
	return s
}

// inputSchema is the JSON schema of a tool taking params.
func inputSchema(params []param) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "object", Properties: make(map[string]*jsonschema.Schema, len(params))}
	for _, p := range params {
		s.Properties[p.name] = p.schema()
		if p.required {
			s.Required = append(s.Required, p.name)
		}
	}
	return s
}

// args are a call's decoded arguments, keyed by parameter name; a parameter
// the caller left out (or sent as null) is absent.
type args map[string]any

// decodeArgs checks raw against params and decodes each value. Its errors
// name the parameter and say what it takes, for the model to correct.
func decodeArgs(raw json.RawMessage, params []param) (args, error) {
	var fields map[string]json.RawMessage
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &fields); err != nil {
			return nil, fmt.Errorf("arguments must be a JSON object of parameter names to values")
		}
	}
	known := make(map[string]bool, len(params))
	for _, p := range params {
		known[p.name] = true
	}
	for name := range fields {
		if !known[name] {
			return nil, fmt.Errorf("unknown parameter %q; this tool takes %s", name, paramNames(params))
		}
	}
	out := make(args, len(fields))
	for _, p := range params {
		v, ok := fields[p.name]
		if !ok || string(bytes.TrimSpace(v)) == "null" {
			if p.required {
				return nil, fmt.Errorf("%s is required", p.name)
			}
			continue
		}
		d, err := p.decode(v)
		if err != nil {
			return nil, err
		}
		out[p.name] = d
	}
	return out, nil
}

func paramNames(params []param) string {
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = p.name
	}
	return strings.Join(names, ", ")
}

func (p param) decode(v json.RawMessage) (any, error) {
	switch p.kind {
	case kindString:
		var s string
		if json.Unmarshal(v, &s) != nil {
			return nil, fmt.Errorf("%s must be a string, got %s", p.name, v)
		}
		return s, nil
	case kindEnum:
		var s string
		if json.Unmarshal(v, &s) == nil {
			if n, ok := enumNumber(p.enum, s); ok {
				return n, nil
			}
		}
		return nil, fmt.Errorf("%s must be one of %s, got %s", p.name, strings.Join(enumNames(p.enum), ", "), v)
	case kindBool:
		var b bool
		if json.Unmarshal(v, &b) == nil {
			return b, nil
		}
		if b, err := strconv.ParseBool(unquote(v)); err == nil {
			return b, nil
		}
		return nil, fmt.Errorf("%s must be true or false, got %s", p.name, v)
	case kindInt32, kindInt64:
		n, ok := integer(v)
		switch {
		case !ok:
			return nil, fmt.Errorf("%s must be a whole number, like 20, got %s", p.name, v)
		case p.kind == kindInt64:
			return n, nil
		case n < math.MinInt32 || n > math.MaxInt32:
			return nil, fmt.Errorf("%s must be at most %d, got %s", p.name, math.MaxInt32, v)
		}
		return int32(n), nil
	case kindNumber:
		var f float64
		if json.Unmarshal(v, &f) == nil {
			return f, nil
		}
		if f, err := strconv.ParseFloat(unquote(v), 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f, nil
		}
		return nil, fmt.Errorf("%s must be a number, got %s", p.name, v)
	case kindStrings:
		var ss []string
		if json.Unmarshal(v, &ss) != nil {
			return nil, fmt.Errorf(`%s must be an array of strings, like ["https://example.com/a", "https://example.com/b"]`, p.name)
		}
		return ss, nil
	case kindFormValues:
		return formValues(p.name, v)
	case kindFields:
		return decodeFields(p.name, v)
	case kindStringMap:
		var m map[string]string
		if err := json.Unmarshal(v, &m); err != nil || m == nil {
			return nil, fmt.Errorf(`%s must be an object of names to strings, like {"text": "blue socks"}`, p.name)
		}
		return m, nil
	case kindJSONArray:
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s, nil
		}
		var list []json.RawMessage
		if json.Unmarshal(v, &list) != nil {
			return nil, fmt.Errorf("%s must be a JSON array, got %s", p.name, v)
		}
		var b bytes.Buffer
		if err := json.Compact(&b, v); err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
		return b.String(), nil
	}
	return nil, fmt.Errorf("%s: no decoder for its kind", p.name)
}

// integer reads a JSON number or a string holding one; a number written
// with a zero fraction (20.0) counts as whole.
func integer(v json.RawMessage) (int64, bool) {
	s := unquote(v)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// unquote returns a JSON string's content, or the raw text of any other
// JSON value, trimmed.
func unquote(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return strings.TrimSpace(s)
	}
	return strings.TrimSpace(string(v))
}

// formValues decodes {"field": value, ...}, where a value is a string,
// number or boolean (one value) or an array of them (several, for
// multi-selects and checkbox groups).
func formValues(name string, v json.RawMessage) (map[string]*distillv1.FieldValues, error) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(v, &fields) != nil {
		return nil, fmt.Errorf(`%s must be an object of field names to values, like {"q": "tide pools", "tags": ["a", "b"]}`, name)
	}
	out := make(map[string]*distillv1.FieldValues, len(fields))
	for field, raw := range fields {
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) != nil {
			list = []json.RawMessage{raw}
		}
		fv := &distillv1.FieldValues{Values: make([]string, 0, len(list))}
		for _, item := range list {
			s, ok := scalar(item)
			if !ok {
				return nil, fmt.Errorf("%s.%s must be a string, number, boolean or an array of them, got %s", name, field, raw)
			}
			fv.Values = append(fv.Values, s)
		}
		out[field] = fv
	}
	return out, nil
}

// scalar writes a JSON string, number or boolean as a form would send it.
func scalar(v json.RawMessage) (string, bool) {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return "", false
	}
	switch x := x.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case float64:
		// The JSON text of a number is what the model wrote: 3, 2.50, 1e3.
		return strings.TrimSpace(string(v)), true
	}
	return "", false
}

// enumNames lists an enum's values as parameters spell them: the value
// name without the enum's prefix, lower case (FORMAT_MARKDOWN is
// markdown). The UNSPECIFIED value, first by proto convention, is left out.
func enumNames(d protoreflect.EnumDescriptor) []string {
	values := d.Values()
	prefix := strings.TrimSuffix(string(values.Get(0).Name()), "UNSPECIFIED")
	names := make([]string, 0, values.Len()-1)
	for i := 1; i < values.Len(); i++ {
		names = append(names, strings.ToLower(strings.TrimPrefix(string(values.Get(i).Name()), prefix)))
	}
	return names
}

func enumNumber(d protoreflect.EnumDescriptor, name string) (protoreflect.EnumNumber, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	for i, n := range enumNames(d) {
		if n == name {
			return d.Values().Get(i + 1).Number(), true
		}
	}
	return 0, false
}

// Readers of decoded arguments; each returns the zero value (or nil) when
// the parameter was left out.

func (a args) str(name string) string    { s, _ := a[name].(string); return s }
func (a args) flag(name string) bool     { b, _ := a[name].(bool); return b }
func (a args) num(name string) float64   { f, _ := a[name].(float64); return f }
func (a args) strs(name string) []string { s, _ := a[name].([]string); return s }

func (a args) enum(name string) int32 {
	n, _ := a[name].(protoreflect.EnumNumber)
	return int32(n)
}

func (a args) int32p(name string) *int32 {
	if n, ok := a[name].(int32); ok {
		return &n
	}
	return nil
}

func (a args) int32v(name string) int32 { n, _ := a[name].(int32); return n }

func (a args) int64p(name string) *int64 {
	if n, ok := a[name].(int64); ok {
		return &n
	}
	return nil
}

func (a args) stringMap(name string) map[string]string {
	v, _ := a[name].(map[string]string)
	return v
}

func (a args) fields(name string) []*distillv1.PickField {
	v, _ := a[name].([]*distillv1.PickField)
	return v
}

func (a args) formValues(name string) map[string]*distillv1.FieldValues {
	v, _ := a[name].(map[string]*distillv1.FieldValues)
	return v
}
