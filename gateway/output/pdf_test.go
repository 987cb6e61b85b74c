package output

import (
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// page_count is a PDF's: present with its pages, absent for a web page, in
// the JSON and the diagnostics line alike.
func TestPageCountOnlyForPDFs(t *testing.T) {
	for _, tt := range []struct {
		name  string
		pages *int32
		want  string
	}{
		{name: "pdf", pages: proto.Int32(12), want: " pages=12"},
		{name: "web page"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := &distillv1.Distilled{FinalUrl: "https://example.com/a", Diagnostics: &distillv1.Diagnostics{Profile: "full", PageCount: tt.pages}}
			b, err := MarshalDistilled(d)
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				Diagnostics map[string]any `json:"diagnostics"`
			}
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			got, present := m.Diagnostics["page_count"]
			if present != (tt.pages != nil) || (present && got != float64(*tt.pages)) {
				t.Errorf("page_count %v (present %t), want %v", got, present, tt.pages)
			}
			line := DiagnosticsLine(d)
			if tt.want != "" && !strings.HasSuffix(line, tt.want) || tt.want == "" && strings.Contains(line, "pages=") {
				t.Errorf("line %q, want it to end %q", line, tt.want)
			}
		})
	}
}
