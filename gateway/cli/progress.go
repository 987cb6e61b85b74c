package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// isTerminal reports whether w is a terminal. A writer that is not a file
// may say so itself (a pseudo-terminal's wrapper, a test's screen).
func isTerminal(w io.Writer) bool {
	if t, ok := w.(interface{ IsTerminal() bool }); ok {
		return t.IsTerminal()
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// progress draws a batch's progress on one line of a terminal, and nothing
// at all anywhere else: pipes and files get only the results.
type progress struct {
	w       io.Writer
	total   int
	started time.Time
	every   time.Duration

	mu     sync.Mutex
	done   int
	failed int
	drawn  time.Time
}

// newProgress returns a progress line for total URLs on w, or nil when w
// is not a terminal or there is one URL only.
func newProgress(w io.Writer, total int) *progress {
	if total < 2 || !isTerminal(w) {
		return nil
	}
	p := &progress{w: w, total: total, started: time.Now(), every: 100 * time.Millisecond}
	p.draw(true)
	return p
}

// step counts one answered URL.
func (p *progress) step(failed bool) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if failed {
		p.failed++
	}
	p.draw(p.done == p.total)
}

// finish erases the line, so what follows starts clean.
func (p *progress) finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprint(p.w, "\r\033[K")
}

// draw writes the line, at most every p.every unless forced; p.mu is held.
func (p *progress) draw(force bool) {
	now := time.Now()
	if !force && now.Sub(p.drawn) < p.every {
		return
	}
	p.drawn = now
	const width = 24
	filled := width * p.done / p.total
	line := fmt.Sprintf("\r\033[K[%s%s] %d/%d", strings.Repeat("=", filled), strings.Repeat(" ", width-filled), p.done, p.total)
	if p.failed > 0 {
		line += fmt.Sprintf(" · %d failed", p.failed)
	}
	line += fmt.Sprintf(" · %.1fs", now.Sub(p.started).Seconds())
	fmt.Fprint(p.w, line)
}
