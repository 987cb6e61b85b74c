package output

import (
	"bytes"
	"encoding/json"
	"strconv"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// A picker's result has two JSON forms. Printed on its own (the
// markdown and text formats, the MCP select tool) it is the bare value a
// program wants: an array of values, records or {selector, text}
// elements, an XPath expression's one value, or, with similar,
// {selector, matches | records}. Inside a page's JSON it is an object
// naming its part, so that it can also say what max_matches left out.

// pickedJSON is Distilled.picked inside a page's JSON.
type pickedJSON struct {
	Values   *[]string       `json:"values,omitempty"`
	Records  *[]recordJSON   `json:"records,omitempty"`
	Matches  *[]elementJSON  `json:"matches,omitempty"`
	Value    json.RawMessage `json:"value,omitempty"`
	Similar  bool            `json:"similar,omitempty"`
	Selector *string         `json:"selector,omitempty"`
	Omitted  int32           `json:"omitted,omitempty"`
}

type elementJSON struct {
	Selector string `json:"selector"`
	Text     string `json:"text"`
}

// recordJSON is a record with its fields in the order they were asked
// for, a field that found nothing as null.
type recordJSON []*distillv1.PickedField

func (r recordJSON) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range r {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(f.GetName())
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		if f.Value == nil {
			b.WriteString("null")
			continue
		}
		v, err := marshal(f.GetValue())
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func toPickedJSON(p *distillv1.Picked) *pickedJSON {
	out := &pickedJSON{Similar: p.GetSimilar(), Selector: p.Selector, Omitted: p.GetOmitted()}
	switch p.GetKind() {
	case distillv1.PickedKind_PICKED_KIND_RECORDS:
		r := records(p)
		out.Records = &r
	case distillv1.PickedKind_PICKED_KIND_ELEMENTS:
		e := elements(p)
		out.Matches = &e
	case distillv1.PickedKind_PICKED_KIND_SCALAR:
		out.Value = scalar(p)
	default:
		v := nonNil(p.GetValues())
		out.Values = &v
	}
	return out
}

func records(p *distillv1.Picked) []recordJSON {
	out := make([]recordJSON, 0, len(p.GetRecords()))
	for _, r := range p.GetRecords() {
		out = append(out, r.GetFields())
	}
	return out
}

func elements(p *distillv1.Picked) []elementJSON {
	out := make([]elementJSON, 0, len(p.GetElements()))
	for _, e := range p.GetElements() {
		out = append(out, elementJSON{Selector: e.GetSelector(), Text: e.GetText()})
	}
	return out
}

func scalar(p *distillv1.Picked) json.RawMessage {
	switch s := p.GetScalar().(type) {
	case *distillv1.Picked_Number:
		b, err := json.Marshal(s.Number)
		if err != nil {
			// NaN and the infinities are not JSON numbers: XPath writes
			// them as strings.
			return json.RawMessage(strconv.Quote(strconv.FormatFloat(s.Number, 'g', -1, 64)))
		}
		return b
	case *distillv1.Picked_String_:
		b, _ := marshal(s.String_)
		return b
	case *distillv1.Picked_Boolean:
		return json.RawMessage(strconv.FormatBool(s.Boolean))
	}
	return json.RawMessage("null")
}

// similarJSON is the printed form of similar's result.
type similarJSON struct {
	Selector *string        `json:"selector,omitempty"`
	Matches  *[]elementJSON `json:"matches,omitempty"`
	Records  *[]recordJSON  `json:"records,omitempty"`
}

// pickedPrintout is the bare value a picker's result prints as.
func pickedPrintout(p *distillv1.Picked) any {
	if p.GetSimilar() {
		out := similarJSON{Selector: p.Selector}
		if p.GetKind() == distillv1.PickedKind_PICKED_KIND_RECORDS {
			r := records(p)
			out.Records = &r
		} else {
			e := elements(p)
			out.Matches = &e
		}
		return out
	}
	switch p.GetKind() {
	case distillv1.PickedKind_PICKED_KIND_RECORDS:
		return records(p)
	case distillv1.PickedKind_PICKED_KIND_ELEMENTS:
		return elements(p)
	case distillv1.PickedKind_PICKED_KIND_SCALAR:
		return scalar(p)
	default:
		return nonNil(p.GetValues())
	}
}

// MarshalPicked returns a picker's result printed on its own, compact, for
// callers that embed it (the MCP select tool).
func MarshalPicked(p *distillv1.Picked) ([]byte, error) {
	return marshal(pickedPrintout(p))
}

// pickedText is a picker's result as the markdown and text formats print
// it: indented JSON.
func pickedText(p *distillv1.Picked) string {
	var b bytes.Buffer
	if err := encode(&b, pickedPrintout(p)); err != nil {
		return ""
	}
	return b.String()
}

// MoreMatches says how many matches were left out: "1 more match", "3
// more matches".
func MoreMatches(n int) string {
	if n == 1 {
		return "1 more match"
	}
	return strconv.Itoa(n) + " more matches"
}
