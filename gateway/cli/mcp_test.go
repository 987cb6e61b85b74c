package cli

import (
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
