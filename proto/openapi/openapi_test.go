package openapi

import (
	"encoding/json"
	"testing"
)

// The document is the annotations' own: every call of DistillService at
// its path, the streaming ones included, with the version given.
func TestDocument(t *testing.T) {
	b, err := Document("1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Swagger string                    `json:"swagger"`
		Info    map[string]string         `json:"info"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Swagger != "2.0" || doc.Info["version"] != "1.2.3" {
		t.Errorf("swagger %q, info %v", doc.Swagger, doc.Info)
	}
	for path, method := range map[string]string{
		"/api/v1/fetch": "post", "/api/v1/crawls/{job_id}": "get", "/api/v1/sessions/{session_id}": "delete", "/api/v1/cache": "get",
		"/api/v1/fetch:batch": "post", "/api/v1/map": "post", "/api/v1/crawls": "post",
	} {
		if _, ok := doc.Paths[path][method]; !ok {
			t.Errorf("no %s %s in %v", method, path, doc.Paths[path])
		}
	}
}
