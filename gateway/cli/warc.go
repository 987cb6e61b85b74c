package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"distill.dev/gateway/app"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/warc"
	"distill.dev/services/platform/version"
)

// warcFlag is --warc FILE, shared by the commands that fetch over HTTP
// (fetch, map, crawl): every HTTP exchange their fetcher makes is kept in
// FILE as WARC/1.1 records.
type warcFlag struct {
	path string
}

func (w *warcFlag) register(fs *pflag.FlagSet) {
	fs.StringVar(&w.path, "warc", "", "keep every HTTP exchange (pages, redirects, robots.txt, sitemaps) as WARC/1.1 request and response records in `FILE`, appended to it; a name ending in .gz gzips each record")
}

// check refuses --warc where no HTTP exchange of this process could be
// kept: with --js always a page is a render, which is no HTTP exchange,
// and with --server the fetching is done by the gateway's fetchers.
func (w *warcFlag) check(js distillv1.JsMode, server string) error {
	switch {
	case w.path == "":
		return nil
	case js == distillv1.JsMode_JS_MODE_ALWAYS:
		return usagef("--warc cannot be used with --js always: a render is not an HTTP exchange (use --js auto or off; with auto a rendered page keeps the HTTP exchanges the fetcher made)")
	case server != "":
		return usagef("--warc cannot be used with --server: the gateway's fetchers make the HTTP exchanges, out of this process's sight")
	}
	return nil
}

// open opens the WARC file, when --warc was given, and has cfg's fetcher
// record into it. The returned func closes it: call it with the command's
// error; it returns that error, or the file's when the command succeeded
// but a record could not be written.
func (w *warcFlag) open(cfg *app.Config, command string) (func(error) error, error) {
	if w.path == "" {
		return func(err error) error { return err }, nil
	}
	wr, err := warc.Open(w.path, warc.Info{Software: "distill/" + version.String(), Command: command})
	if err != nil {
		if _, ok := errors.AsType[*warc.CorruptFileError](err); ok {
			return nil, usageError{err}
		}
		return nil, err
	}
	cfg.Recorder = wr
	return func(err error) error {
		cerr := wr.Close()
		if cerr == nil {
			return err
		}
		cerr = fmt.Errorf("--warc %s: %w", w.path, cerr)
		// A failure already reported (exitError) says only the exit
		// code; the file's error must still be said.
		if _, reported := errors.AsType[exitError](err); err == nil || reported {
			return cerr
		}
		return errors.Join(err, cerr)
	}, nil
}
