package render

import (
	"log/slog"
	"os"
	"testing"
)

// shared is the Renderer, and the one Chromium, of the tests that need no
// browser of their own. Every render gets its own browser context, as in
// production, so the tests share what the service shares. Tests that kill,
// stop, cap or close their browser, or configure their Renderer otherwise,
// make their own.
var (
	shared     *Renderer
	sharedLogs = &syncBuffer{}
)

func TestMain(m *testing.M) {
	shared = New(slog.New(slog.NewTextHandler(sharedLogs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	code := m.Run()
	// Close waits until the browser is gone and its profile removed.
	_ = shared.Close()
	os.Exit(code)
}
