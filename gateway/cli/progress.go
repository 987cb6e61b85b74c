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

// redrawEvery is how often the progress line is redrawn while nothing
// completes, so that its clock keeps running through slow URLs.
const redrawEvery = 200 * time.Millisecond

// progress draws a batch's progress on one line of a terminal, and nothing
// at all anywhere else: pipes and files get only the results.
type progress struct {
	w           io.Writer
	total       int
	concurrency int
	started     time.Time
	// every bounds how often completions redraw the line.
	every time.Duration
	stop  chan struct{}
	done  chan struct{}

	mu       sync.Mutex
	answered int
	failed   int
	drawn    time.Time
}

// newProgress returns a progress line for total URLs, concurrency of them
// fetched at once, on w, or nil when w is not a terminal or there is one
// URL only. It redraws every redrawEvery until finish.
func newProgress(w io.Writer, total, concurrency int) *progress {
	if total < 2 || !isTerminal(w) {
		return nil
	}
	t := time.NewTicker(redrawEvery)
	p := startProgress(w, total, concurrency, t.C)
	go func() {
		<-p.done
		t.Stop()
	}()
	return p
}

// startProgress draws the line and redraws it on every tick.
func startProgress(w io.Writer, total, concurrency int, ticks <-chan time.Time) *progress {
	p := &progress{w: w, total: total, concurrency: concurrency, started: time.Now(), every: 100 * time.Millisecond,
		stop: make(chan struct{}), done: make(chan struct{})}
	p.mu.Lock()
	p.draw(true)
	p.mu.Unlock()
	go func() {
		defer close(p.done)
		for {
			select {
			case <-p.stop:
				return
			case <-ticks:
				p.mu.Lock()
				p.draw(true)
				p.mu.Unlock()
			}
		}
	}()
	return p
}

// step counts one answered URL.
func (p *progress) step(failed bool) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answered++
	if failed {
		p.failed++
	}
	p.draw(p.answered == p.total)
}

// pause runs write with the line off the screen, then draws it again: what
// write prints to the same terminal keeps lines of its own.
func (p *progress) pause(write func()) {
	if p == nil {
		write()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprint(p.w, "\r\033[K")
	write()
	p.draw(true)
}

// finish stops the redraws and erases the line, so what follows starts
// clean.
func (p *progress) finish() {
	if p == nil {
		return
	}
	close(p.stop)
	<-p.done
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
	filled := width * p.answered / p.total
	line := fmt.Sprintf("\r\033[K[%s%s] %d/%d", strings.Repeat("=", filled), strings.Repeat(" ", width-filled), p.answered, p.total)
	if p.failed > 0 {
		line += fmt.Sprintf(" · %d failed", p.failed)
	}
	// At most concurrency URLs are out at once; the rest wait their turn.
	if inFlight := min(p.concurrency, p.total-p.answered); inFlight > 0 {
		line += fmt.Sprintf(" · %d in flight", inFlight)
	}
	line += fmt.Sprintf(" · %.1fs", now.Sub(p.started).Seconds())
	fmt.Fprint(p.w, line)
}
