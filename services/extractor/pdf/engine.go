// Package pdf turns PDF documents into Markdown: text in reading order,
// headings where the fonts say so, and the document's own title and author.
// PDFium does the reading, compiled to WebAssembly and run on wazero, so no
// cgo is needed and a hostile file can reach neither the filesystem nor
// more memory than a worker's limit.
package pdf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/klippa-app/go-pdfium"
	"github.com/klippa-app/go-pdfium/webassembly"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// Defaults for an Engine's options.
const (
	DefaultWorkers = 2
	// DefaultMemoryLimit bounds one document's worker: the body it reads,
	// PDFium's parse of it and the text of the page being read.
	DefaultMemoryLimit = 256 << 20
	// DefaultTimeout bounds one document when the caller's context does
	// not bound it sooner.
	DefaultTimeout = 30 * time.Second
)

// wasmPage is WebAssembly's unit of linear memory.
const wasmPage = 64 << 10

// Engine reads PDF documents. Its PDFium runtime is made on first use, in
// the background, so that a caller can give up waiting for it without
// wasting the work; each document gets a fresh worker with its own memory,
// which is dropped when the document is done, so nothing one document did
// is seen by the next. It is safe for concurrent use; at most Workers
// documents are read at once and the rest wait for a worker.
type Engine struct {
	workers     int
	memoryLimit int64
	timeout     time.Duration
	cacheDir    string

	mu      sync.Mutex
	startup *startup
	closed  bool
	// reads are the reads in flight, which Close waits for.
	reads sync.WaitGroup
}

// startup is one attempt to make the runtime.
type startup struct {
	done chan struct{}
	// Set before done is closed.
	pool pdfium.Pool
	err  error
}

// compiled is the process's compiled PDFium, shared by its engines.
// Compiling the module takes seconds of CPU, and the machine code is the
// same for every engine, so it is made once per process, on first use,
// and kept for the life of the process.
var compiled = sync.OnceValue(wazero.NewCompilationCache)

// onDisk holds the process's caches backed by a directory, one per
// directory, so that engines given the same directory also share the
// machine code in memory.
var onDisk struct {
	sync.Mutex
	caches map[string]wazero.CompilationCache
}

// cacheFor returns the compilation cache for dir: kept in dir, so a later
// process loads the machine code instead of compiling PDFium again, or the
// process's own when dir is empty or cannot be used. A cache is a speed-up,
// never a reason to refuse a document.
func cacheFor(dir string) wazero.CompilationCache {
	if dir == "" {
		return compiled()
	}
	onDisk.Lock()
	defer onDisk.Unlock()
	if c, ok := onDisk.caches[dir]; ok {
		return c
	}
	c, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		return compiled()
	}
	if onDisk.caches == nil {
		onDisk.caches = make(map[string]wazero.CompilationCache)
	}
	onDisk.caches[dir] = c
	return c
}

// Option configures an Engine.
type Option func(*Engine)

// WithWorkers sets how many documents are read at once.
func WithWorkers(n int) Option { return func(e *Engine) { e.workers = max(1, n) } }

// WithMemoryLimit sets the most memory one document's worker may use.
func WithMemoryLimit(bytes int64) Option {
	return func(e *Engine) { e.memoryLimit = max(wasmPage, bytes) }
}

// WithTimeout sets the longest one document may take once it has a worker.
func WithTimeout(d time.Duration) Option { return func(e *Engine) { e.timeout = d } }

// WithCacheDir keeps the compiled PDFium in dir (created if needed), so a
// process after the first skips the seconds of CPU compiling it costs.
// wazero names the files by its version, the machine and the module, and
// writes each one whole before it is seen. The directory holds machine
// code the process runs: give one only this user can write. Empty keeps
// the compiled code in memory only.
func WithCacheDir(dir string) Option { return func(e *Engine) { e.cacheDir = dir } }

// NewEngine returns an Engine. It starts nothing: the runtime is made when
// the first document arrives.
func NewEngine(opts ...Option) *Engine {
	e := &Engine{workers: DefaultWorkers, memoryLimit: DefaultMemoryLimit, timeout: DefaultTimeout}
	for _, o := range opts {
		o(e)
	}
	return e
}

// errClosed is a read asked of a closed Engine.
var errClosed = errors.New("pdf engine is closed")

// instance returns a worker of its own for one document, waiting under
// ctx for the runtime and then for a free worker.
func (e *Engine) instance(ctx context.Context) (pdfium.Pdfium, error) {
	pool, err := e.start(ctx)
	if err != nil {
		return nil, err
	}
	inst, err := pool.GetInstanceWithContext(ctx)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, fmt.Errorf("pdf worker: %w", err)
	}
	return inst, nil
}

// start returns the runtime, making it on first use. A failed attempt is
// not kept, so a later document tries again.
func (e *Engine) start(ctx context.Context) (pdfium.Pool, error) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, errClosed
	}
	s := e.startup
	if s == nil || failed(s) {
		s = &startup{done: make(chan struct{})}
		e.startup = s
		go e.make(s)
	}
	e.mu.Unlock()
	select {
	case <-s.done:
		return s.pool, s.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func failed(s *startup) bool {
	select {
	case <-s.done:
		return s.err != nil
	default:
		return false
	}
}

// make makes the runtime for s. An Engine closed meanwhile gets none.
func (e *Engine) make(s *startup) {
	pool, err := webassembly.Init(webassembly.Config{
		MinIdle:  0,
		MaxIdle:  e.workers,
		MaxTotal: e.workers,
		// No mounts: a document is read from memory and PDFium's standard
		// fonts are built in, so the guest sees no filesystem at all.
		FSConfig: wazero.NewFSConfig(),
		Stdout:   io.Discard,
		Stderr:   io.Discard,
		RuntimeConfig: wazero.NewRuntimeConfig().
			WithCoreFeatures(api.CoreFeaturesV2 | experimental.CoreFeaturesExceptionHandling).
			WithCompilationCache(cacheFor(e.cacheDir)).
			WithMemoryLimitPages(uint32(e.memoryLimit / wasmPage)).
			// Cancelling a worker's context stops the guest mid-call: that
			// is how a document over its time is cut off.
			WithCloseOnContextDone(true),
	})
	if err != nil {
		err = fmt.Errorf("start pdf engine: %w", err)
	}
	e.mu.Lock()
	if e.closed && err == nil {
		_ = pool.Close()
		pool, err = nil, errClosed
	}
	s.pool, s.err = pool, err
	e.mu.Unlock()
	close(s.done)
}

// Close stops the runtime, waiting for one being made; documents being
// read fail. It is safe to call more than once and on an Engine that never
// started.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	s := e.startup
	e.mu.Unlock()
	if s == nil {
		return nil
	}
	<-s.done
	e.reads.Wait()
	if s.pool == nil {
		return nil
	}
	return s.pool.Close()
}
