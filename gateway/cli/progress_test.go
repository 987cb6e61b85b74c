package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestProgressOnATerminalOnly(t *testing.T) {
	srv := pages(t)
	urls := []string{srv.URL + "/article", srv.URL + "/missing-host-page", srv.URL + "/article?b"}

	t.Run("a pipe gets no progress", func(t *testing.T) {
		_, errOut, _ := run(t, append([]string{"fetch", "--allow-local"}, urls...)...)
		if strings.Contains(errOut, "\r") || strings.Contains(errOut, "\033[") || strings.Contains(errOut, "3/3") {
			t.Fatalf("progress drawn into a pipe: %q", errOut)
		}
	})

	t.Run("a terminal gets a line that ends cleared", func(t *testing.T) {
		out, errOut, _ := runOnTerminal(t, append([]string{"fetch", "--allow-local"}, urls...)...)
		if !strings.Contains(errOut, "3/3") || !strings.Contains(errOut, "[========================] 3/3") {
			t.Fatalf("no finished progress line: %q", errOut)
		}
		if !strings.Contains(errOut, "\r\033[K") {
			t.Fatalf("the line is never cleared: %q", errOut)
		}
		if strings.Contains(out, "\033[") {
			t.Fatalf("progress leaked into stdout: %q", out)
		}
	})

	t.Run("one URL has no progress", func(t *testing.T) {
		_, errOut, _ := runOnTerminal(t, "fetch", "--allow-local", urls[0])
		if strings.Contains(errOut, "1/1") {
			t.Fatalf("progress for a single URL: %q", errOut)
		}
	})
}

// screen is a buffer that says it is a terminal.
type screen struct{ bytes.Buffer }

func (*screen) IsTerminal() bool { return true }

// runOnTerminal runs distill with stderr on a terminal.
func runOnTerminal(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out bytes.Buffer
	var errOut screen
	code = Run(context.Background(), args, testEnv(t), &out, &errOut)
	return out.String(), errOut.String(), code
}
