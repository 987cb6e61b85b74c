package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// renderTimeout bounds one cold Chromium; a render that takes longer has
// hung.
const renderTimeout = 60 * time.Second

// measureDumpDOM renders the page the way one does without a renderer
// service: a fresh `chromium --dump-dom` per page, each with a profile of
// its own, as cfg.Concurrency processes at a time.
func measureDumpDOM(ctx context.Context, cfg Config, base string) (summary, error) {
	root, err := os.MkdirTemp("", "distill-bench-render-")
	if err != nil {
		return summary{}, fmt.Errorf("profile directory: %w", err)
	}
	defer func() { _ = os.RemoveAll(root) }()
	renderer := func(phase string) func(ctx context.Context, i int) error {
		return func(ctx context.Context, i int) error {
			return dumpDOM(ctx, cfg.Chromium, root, fmt.Sprintf("%s/?dump=%s-%d", base, phase, i))
		}
	}
	// The warm-up puts Chromium's files in the page cache, as the pool's
	// launch does for it; each measured render still starts a browser.
	if _, _, err := measure(ctx, cfg.WarmUp, cfg.Concurrency, renderer("warm")); err != nil {
		return summary{}, fmt.Errorf("warm-up: %w", err)
	}
	lat, wall, err := measure(ctx, cfg.DumpRenders, cfg.Concurrency, renderer("run"))
	if err != nil {
		return summary{}, err
	}
	return summarize(lat, wall), nil
}

// dumpDOM runs one Chromium on u with a fresh profile under root, removed
// afterwards, and checks the DOM it prints.
func dumpDOM(ctx context.Context, bin, root, u string) error {
	dir, err := os.MkdirTemp(root, "profile-")
	if err != nil {
		return fmt.Errorf("profile directory: %w", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()

	args := []string{"--headless", "--disable-gpu"}
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox")
	}
	args = append(args, "--user-data-dir="+dir, "--dump-dom", "--virtual-time-budget=5000", u)
	ctx, cancel := context.WithTimeout(ctx, renderTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	killGroupOnCancel(cmd)
	// A helper that outlives the browser would hold the pipes open.
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		// After a kill, Chromium's last words are noise.
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("chromium --dump-dom %s: not rendered within %s", u, renderTimeout)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("chromium --dump-dom %s: %w%s", u, err, lastLine(stderr.String()))
	}
	if err := checkDOM(stdout.Bytes()); err != nil {
		return fmt.Errorf("chromium --dump-dom %s: %w", u, err)
	}
	return nil
}

// lastLine is the last line Chromium wrote to stderr, the one most likely
// to say why it failed.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	return ": " + s[strings.LastIndexByte(s, '\n')+1:]
}
