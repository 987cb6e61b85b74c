// Package cli is the `distill` command line: it parses flags into the
// public FetchOptions, runs the in-process system, and prints results. Exit
// codes: 0 when everything succeeded, 1 when a page or the server failed,
// 2 for bad usage.
package cli

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"distill.dev/gateway/app"
	"distill.dev/services/extractor/extract"
	"distill.dev/services/platform/envflag"
	"distill.dev/services/platform/version"
	"distill.dev/services/renderer/render"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// exitError carries an exit code out of a command whose failure has
// already been reported on stderr.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// usageError marks a mistake in how the command was called.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// Run runs distill with args (without the program name) and returns the
// exit code. env is where flags find their defaults (the process's
// environment in main).
func Run(ctx context.Context, args []string, env *envflag.Env, stdout, stderr io.Writer) int {
	root := newRoot(env, stdout, stderr)
	root.SetArgs(args)
	return exitCode(root.ExecuteContext(ctx), stderr)
}

// exitCode reports err on stderr, unless already reported, and returns the
// exit code it stands for.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return ExitOK
	}
	if e, ok := errors.AsType[exitError](err); ok {
		return e.code
	}
	fmt.Fprintf(stderr, "distill: %v\n", err)
	if isUsage(err) {
		fmt.Fprintln(stderr, "Run 'distill --help' for usage.")
		return ExitUsage
	}
	return ExitFailure
}

func isUsage(err error) bool {
	if _, ok := errors.AsType[usageError](err); ok {
		return true
	}
	// Cobra's own parse errors carry no type; their wording is stable.
	msg := err.Error()
	for _, p := range []string{"unknown flag", "unknown shorthand flag", "unknown command", "invalid argument", "flag needs an argument", "requires at least", "accepts "} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

type globals struct {
	env            *envflag.Env
	stdout, stderr io.Writer
	logLevel       slog.Level
	// cacheDir is --cache-dir; empty means cache.DefaultDir.
	cacheDir string
	// chromium is the browser for renders in this process.
	chromium string
	// anonymousRenders keeps sessions' cookies out of renders.
	anonymousRenders bool
	// extractMemory is --extract-memory, in MiB.
	extractMemory int
	// pdfCacheDir is --pdf-cache-dir; empty keeps the compiled PDF engine
	// in memory only.
	pdfCacheDir string
}

// appConfig is distill in this process as the global flags and the
// environment configure it, with workers batch jobs at once.
func (g *globals) appConfig(workers int) app.Config {
	return app.Config{
		UserAgentVersion: version.String(),
		AnonymousRenders: g.anonymousRenders,
		Workers:          workers,
		CacheDir:         g.cacheDir,
		Chromium:         g.chromium,
		ExtractMemory:    int64(g.extractMemory) << 20,
		PDFCacheDir:      g.pdfCacheDir,
		RootCAs:          g.rootCAs(),
	}
}

// certFile is the variable Go's TLS clients take their trusted roots
// from in place of the system's.
const certFile envflag.Var = "SSL_CERT_FILE"

// rootCAs are the certificates the in-process fetcher trusts when
// SSL_CERT_FILE names a file of them, as every Go client of the process
// does: read from the command's environment, which is not always the
// process's (a test's). Nil, when it names none or nothing readable: the
// system's roots, which Go reads from the same variable.
func (g *globals) rootCAs() *x509.CertPool {
	path, ok := g.env.Lookup(certFile)
	if !ok || path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil
	}
	return pool
}

// defaultPDFCacheDir is distill-pdfium under the user cache directory,
// beside the fetch cache rather than in it, so that clearing the cache
// leaves the engine. Without a user cache directory, there is none.
func defaultPDFCacheDir() string {
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(base, "distill-pdfium")
}

func (g *globals) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(g.stderr, &slog.HandlerOptions{Level: g.logLevel}))
}

// serverLogger is the logger of a long-running server: at info unless
// --log-level says otherwise, so that it says where it listens and when it
// is ready.
func (g *globals) serverLogger(cmd *cobra.Command) *slog.Logger {
	level := g.logLevel
	if !cmd.Flags().Changed("log-level") {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(g.stderr, &slog.HandlerOptions{Level: level}))
}

func newRoot(env *envflag.Env, stdout, stderr io.Writer) *cobra.Command {
	g := &globals{env: env, stdout: stdout, stderr: stderr, logLevel: slog.LevelError}
	root := &cobra.Command{
		Use:   "distill",
		Short: "Turn web pages into clean, bounded, LLM-ready content",
		Long: "distill fetches web pages and turns them into clean Markdown, text or JSON for\n" +
			"language models, under a network policy that keeps it away from private addresses.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// --version answers as the version command does. The text is a
	// template to cobra: it holds no braces.
	root.Version = version.String()
	root.SetVersionTemplate(versionText(version.Get()))
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.PersistentFlags().Var(&levelFlag{&g.logLevel}, "log-level", "log level on stderr: debug, info, warn or error")
	root.PersistentFlags().StringVar(&g.cacheDir, "cache-dir", env.String(envflag.CacheDir, ""), envflag.Usage("fetch cache directory (default distill under the user cache directory)", envflag.CacheDir))
	root.PersistentFlags().StringVar(&g.chromium, "chromium", env.String(envflag.Chromium, render.DefaultChromium), envflag.Usage("Chromium binary for headless renders", envflag.Chromium))
	root.PersistentFlags().BoolVar(&g.anonymousRenders, "fallback-no-cookies", env.Bool(envflag.FallbackNoCookies, false), envflag.Usage("never hand a session's cookies to a headless render", envflag.FallbackNoCookies))
	root.PersistentFlags().StringVar(&g.pdfCacheDir, "pdf-cache-dir", env.String(envflag.PDFCacheDir, defaultPDFCacheDir()), envflag.Usage("keep the compiled PDF engine here, so that only the first PDF of the first run pays the seconds compiling it costs; empty: compile it in every process", envflag.PDFCacheDir))
	root.PersistentFlags().IntVar(&g.extractMemory, "extract-memory", env.Int(envflag.ExtractMemory, extract.DefaultMemoryBudget>>20), envflag.Usage("MiB of memory this process's extractions may hold at once; more wait their turn (each page weighs about 25 times its size)", envflag.ExtractMemory))
	// A variable that cannot be read is refused before any command runs.
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if err := env.Err(); err != nil {
			return usageError{err}
		}
		return nil
	}
	root.AddCommand(newFetchCmd(g), newMapCmd(g), newCrawlCmd(g), newExtractCmd(g), newServeCmd(g), newMCPCmd(g), newHostCmd(g), newCacheCmd(g), newVersionCmd(g))
	return root
}

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print distill's version, commit, build date and Go version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := io.WriteString(g.stdout, versionText(version.Get()))
			return err
		},
	}
}

// versionText is what `distill version` and `distill --version` print: the
// version on the first line, as tools expect, then what a bug report needs.
func versionText(in version.Info) string {
	return fmt.Sprintf("distill %s\ncommit  %s\nbuilt   %s\ngo      %s\n", in.Version, in.Commit, in.Date, in.Go)
}

type levelFlag struct{ l *slog.Level }

func (f *levelFlag) String() string { return strings.ToLower(f.l.String()) }
func (f *levelFlag) Type() string   { return "level" }
func (f *levelFlag) Set(s string) error {
	return f.l.UnmarshalText([]byte(s))
}
