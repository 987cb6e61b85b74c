package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPFlagsThatCannotWork checks usage mistakes; serving, and refusing
// --http without a token, are tested in gateway/mcp against the binary.
func TestMCPFlagsThatCannotWork(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     string
	}{
		{name: "no-auth without http", args: []string{"mcp", "--no-auth"}, wantCode: ExitUsage, want: "--no-auth applies to --http only"},
		{name: "arguments", args: []string{"mcp", "extra"}, wantCode: ExitUsage, want: "unknown command"},
		{name: "loud flag without no-auth", args: []string{"mcp", "--http", "127.0.0.1:0", "--allow-unauthenticated-remote"}, wantCode: ExitUsage, want: "--allow-unauthenticated-remote applies to --http --no-auth only"},
		// Every address other machines reach needs the loud flag, one of
		// several included.
		{name: "no-auth on every address", args: []string{"mcp", "--http", "0.0.0.0:0", "--no-auth"}, wantCode: ExitUsage, want: "pass --allow-unauthenticated-remote too"},
		{name: "no-auth on an unnamed host", args: []string{"mcp", "--http", ":0", "--no-auth"}, wantCode: ExitUsage, want: "pass --allow-unauthenticated-remote too"},
		{name: "no-auth on loopback and every address", args: []string{"mcp", "--http", "127.0.0.1:0,0.0.0.0:0", "--no-auth"}, wantCode: ExitUsage, want: "pass --allow-unauthenticated-remote too"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, tt.args...)
			if code != tt.wantCode || out != "" || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, out, errOut, tt.wantCode, tt.want)
			}
		})
	}
}

// A policy that cannot serve stops distill mcp at start, in one line.
func TestMCPPolicyRefusedAtStart(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "none.yaml"), "no such file"},
		{"unknown key", write("typo.yaml", "actors: {default: {allowed_hosts: [a.example], alowed_ports: [80]}}"), `unknown field "alowed_ports"`},
		{"no default actor", write("teams.yaml", "actors: {team-a: {allowed_hosts: [a.example]}}"), `runs as the actor "default"`},
		{"bad schema", write("schema.yaml", "actors: {default: {allowed_hosts: [a.example], schemas: {p: {type: object, properties: {a: {$ref: 'https://x.example/s'}}}}}}"), "actors.default: schemas.p"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, "mcp", "--policy", tt.path)
			if code != ExitFailure || out != "" || !strings.Contains(errOut, tt.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and one line with %q", code, out, errOut, ExitFailure, tt.want)
			}
		})
	}
}
