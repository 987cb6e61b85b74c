package render

import (
	"flag"
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

// parallel is how many tests run at once unless -parallel says otherwise.
// They wait on the browser, on network quiet and on timeouts far more than
// they compute, so go test's default of one per core leaves a small machine
// idle; four keep the shared browser within its DefaultMaxPages.
const parallel = "4"

func TestMain(m *testing.M) {
	if os.Getenv(orphanEnv) != "" {
		orphan()
		return
	}
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", parallel)
	}
	shared = New(slog.New(slog.NewTextHandler(sharedLogs, &slog.HandlerOptions{Level: slog.LevelDebug})), WithAllowLocal(true))
	code := m.Run()
	// Close waits until the browser is gone and its profile removed.
	_ = shared.Close()
	os.Exit(code)
}
