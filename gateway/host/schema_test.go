package host

import (
	"fmt"
	"strings"
	"testing"
)

func TestSchemaAbout(t *testing.T) {
	lim := SchemaLimits{MaxDepth: DefaultMaxSchemaDepth, MaxProperties: DefaultMaxSchemaProperties, MaxBytes: DefaultMaxSchemaBytes}
	var many []string
	for i := range 20 {
		many = append(many, fmt.Sprintf(`"f%02d": {"type": "string"}`, i))
	}
	for _, tt := range []struct{ name, schema, want string }{
		{"bare", `{"type": "object"}`, ""},
		{"fields", `{"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}}`, "fields age, name"},
		{"title and description", `{"type": "object", "title": "Offer", "description": "What the  shop\nasks.", "properties": {"price": {"type": "number"}}}`,
			"Offer: What the shop asks; fields price"},
		{"long", `{"type": "object", "description": "` + strings.Repeat("word ", 60) + `"}`, strings.TrimSpace(strings.Repeat("word ", 40))[:199] + "…"},
		{"many fields", `{"type": "object", "properties": {` + strings.Join(many, ", ") + `}}`,
			"fields f00, f01, f02, f03, f04, f05, f06, f07, f08, f09, f10, f11, f12, f13, f14, f15, …"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sc, err := CompileSchema([]byte(tt.schema), lim)
			if err != nil {
				t.Fatal(err)
			}
			if got := sc.About(); got != tt.want {
				t.Errorf("About() = %q, want %q", got, tt.want)
			}
		})
	}
}
