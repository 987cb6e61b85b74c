package output

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

func TestPickedForms(t *testing.T) {
	t.Parallel()
	var (
		values   = distillv1.PickedKind_PICKED_KIND_VALUES
		records  = distillv1.PickedKind_PICKED_KIND_RECORDS
		elements = distillv1.PickedKind_PICKED_KIND_ELEMENTS
		scalar   = distillv1.PickedKind_PICKED_KIND_SCALAR
	)
	rec := []*distillv1.PickedRecord{
		{Fields: []*distillv1.PickedField{{Name: "title", Value: proto.String("Kelp <Forests>")}, {Name: "price", Value: proto.String("£23.10")}, {Name: "sale"}}},
	}
	el := []*distillv1.PickedElement{{Selector: "#catalogue > ol > li:nth-of-type(2) > article > h3 > a", Text: "Kelp Forests"}}
	tests := []struct {
		name          string
		picked        *distillv1.Picked
		alone, inPage string
	}{
		{"values", &distillv1.Picked{Kind: values, Values: []string{"a", "b"}, Omitted: 3},
			`["a","b"]`, `{"values":["a","b"],"omitted":3}`},
		{"no values", &distillv1.Picked{Kind: values}, `[]`, `{"values":[]}`},
		{"records keep their field order and null", &distillv1.Picked{Kind: records, Records: rec},
			`[{"title":"Kelp <Forests>","price":"£23.10","sale":null}]`, `{"records":[{"title":"Kelp <Forests>","price":"£23.10","sale":null}]}`},
		{"found elements", &distillv1.Picked{Kind: elements, Elements: el},
			`[{"selector":"#catalogue > ol > li:nth-of-type(2) > article > h3 > a","text":"Kelp Forests"}]`,
			`{"matches":[{"selector":"#catalogue > ol > li:nth-of-type(2) > article > h3 > a","text":"Kelp Forests"}]}`},
		{"number", &distillv1.Picked{Kind: scalar, Scalar: &distillv1.Picked_Number{Number: 4}}, `4`, `{"value":4}`},
		{"NaN", &distillv1.Picked{Kind: scalar, Scalar: &distillv1.Picked_Number{Number: nan()}}, `"NaN"`, `{"value":"NaN"}`},
		{"string", &distillv1.Picked{Kind: scalar, Scalar: &distillv1.Picked_String_{String_: "tidectl"}}, `"tidectl"`, `{"value":"tidectl"}`},
		{"boolean", &distillv1.Picked{Kind: scalar, Scalar: &distillv1.Picked_Boolean{Boolean: false}}, `false`, `{"value":false}`},
		{"similar elements", &distillv1.Picked{Kind: elements, Similar: true, Selector: proto.String("h3 > a"), Elements: el},
			`{"selector":"h3 > a","matches":[{"selector":"#catalogue > ol > li:nth-of-type(2) > article > h3 > a","text":"Kelp Forests"}]}`,
			`{"matches":[{"selector":"#catalogue > ol > li:nth-of-type(2) > article > h3 > a","text":"Kelp Forests"}],"similar":true,"selector":"h3 > a"}`},
		{"similar records", &distillv1.Picked{Kind: records, Similar: true, Selector: proto.String("article"), Records: rec},
			`{"selector":"article","records":[{"title":"Kelp <Forests>","price":"£23.10","sale":null}]}`,
			`{"records":[{"title":"Kelp <Forests>","price":"£23.10","sale":null}],"similar":true,"selector":"article"}`},
		{"similar, no example", &distillv1.Picked{Kind: elements, Similar: true}, `{"matches":[]}`, `{"matches":[],"similar":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, err := MarshalPicked(tt.picked)
			if err != nil || string(b) != tt.alone {
				t.Errorf("alone: %s (%v), want %s", b, err, tt.alone)
			}
			page, err := MarshalDistilled(&distillv1.Distilled{FinalUrl: "https://shop.example/", Status: 200, Picked: tt.picked})
			want := `{"final_url":"https://shop.example/","status":200,"title":"","markdown":"","picked":` + tt.inPage + `}`
			if err != nil || string(page) != want {
				t.Errorf("in a page: %s (%v), want %s", page, err, want)
			}
			// The markdown and text formats print the bare value, indented.
			text := Content(&distillv1.Distilled{Markdown: "# not this", Picked: tt.picked}, distillv1.Format_FORMAT_MARKDOWN)
			if compact := strings.Join(strings.Fields(text), ""); compact != strings.ReplaceAll(tt.alone, " ", "") {
				t.Errorf("printed:\n%s\nwant the bare value %s", text, tt.alone)
			}
		})
	}
}

func nan() float64 {
	zero := 0.0
	return zero / zero
}
