package host

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

var captured = time.Date(2026, 12, 1, 19, 30, 0, 123000000, time.FixedZone("CET", 3600))

func TestSealEnvelope(t *testing.T) {
	p := provenance{
		requested: "https://docs.example.com/start?token=s3cret",
		final:     "https://docs.example.com/page?session_id=abc&page=2",
		redirects: []string{"https://docs.example.com/start?token=s3cret"},
		captured:  captured,
	}
	data := map[string]any{"tags": []any{"a", "b"}, "price": 9.5, "name": "Widget"}
	env, size, err := seal("op-1", p, data, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if env.Status != StatusOK || env.Truncated || size != len(`{"name":"Widget","price":9.5,"tags":["a","b"]}`) {
		t.Fatalf("status %s truncated %v size %d", env.Status, env.Truncated, size)
	}
	// The extraction vector of TestCanonicalAndDigestVectors.
	if env.Digest != "fc0b7edc7dcc4e1407f691d3fa18b38cec2e95d179b9b944af75e50b3e4759a2" {
		t.Fatalf("digest %s", env.Digest)
	}
	if env.CapturedAt != "2026-12-01T18:30:00.123Z" {
		t.Fatalf("captured_at %s, want UTC", env.CapturedAt)
	}
	if env.FinalURL != "https://docs.example.com/page?session_id=REDACTED&page=2" {
		t.Fatalf("final_url %s", env.FinalURL)
	}
	text, err := env.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(text), "s3cret") || strings.Contains(string(text), "abc") {
		t.Fatalf("a credential left in provenance: %s", text)
	}
	var keys map[string]any
	if err := json.Unmarshal(text, &keys); err != nil {
		t.Fatal(err)
	}
	got := make([]string, 0, len(keys))
	for k := range keys {
		got = append(got, k)
	}
	slices.Sort(got)
	want := []string{"captured_at", "data", "digest", "final_url", "locator", "operation_id", "status", "truncated"}
	if !slices.Equal(got, want) {
		t.Fatalf("keys %v, want %v", got, want)
	}
}

func TestTruncation(t *testing.T) {
	tests := []struct {
		name  string
		data  any
		limit int
		want  string // canonical JSON of the data returned
	}{
		{"fits", "hello", 7, `"hello"`},
		{"string cut", "hello", 5, `"hel"`},
		{"string cut at a character", "héllo", 4, `"h"`}, // é takes two bytes
		{"escapes count", "a\nb", 4, `"a"`},
		{"array prefix", []any{"aa", "bb", "cc"}, 11, `["aa","bb"]`},
		{"array of nothing that fits", []any{"a long item"}, 8, `"[\"a l"`},
		{"object preview", map[string]any{"name": "Widget"}, 12, `"{\"name\":"`},
		{"tiny", map[string]any{"name": "Widget"}, 2, `""`},
		{"one byte", "x", 1, `""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, size, err := seal("op", provenance{captured: captured}, tt.data, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			c, _ := Canonical(env.Data)
			if string(c) != tt.want {
				t.Fatalf("data %s, want %s", c, tt.want)
			}
			if size != len(c) {
				t.Fatalf("size %d, canonical %d", size, len(c))
			}
			wantTrunc := tt.name != "fits"
			if env.Truncated != wantTrunc || (env.Status == StatusTruncated) != wantTrunc {
				t.Fatalf("truncated %v status %s", env.Truncated, env.Status)
			}
			if d, _ := Digest(env.Data); d != env.Digest {
				t.Fatal("the digest is not that of the data returned")
			}
		})
	}
}

func TestFailedEnvelope(t *testing.T) {
	env := failed("op-2", provenance{requested: "https://x.example/?password=hunter2", captured: captured}, errorf(NotAuthorized, "x.example is not in the host's allowed hosts"))
	text, _ := env.JSON()
	want := `{"status":"error","operation_id":"op-2","final_url":"","captured_at":"2026-12-01T18:30:00.123Z","locator":{"url":"https://x.example/?password=REDACTED"},"digest":"74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b","truncated":false,"data":null,"error":{"code":"NOT_AUTHORIZED","message":"x.example is not in the host's allowed hosts"}}`
	if string(text) != want {
		t.Fatalf("%s\nwant\n%s", text, want)
	}
}

func TestSafeCodes(t *testing.T) {
	want := []string{"INVALID_INPUT", "NOT_AUTHORIZED", "UNSUPPORTED_SECURITY_CAPABILITY", "BUDGET_EXHAUSTED",
		"SESSION_UNKNOWN", "CLEANUP_PENDING", "APPROVAL_REQUIRED", "APPROVAL_STALE", "PROVIDER_ERROR"}
	codes := Codes()
	got := make([]string, len(codes))
	for i, c := range codes {
		got[i] = string(c)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("codes %v, want exactly the seed's %v", got, want)
	}
}
