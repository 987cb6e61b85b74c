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
