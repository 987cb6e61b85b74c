package cli

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"distill.dev/gateway/output"
	"distill.dev/proto/fetchopts"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// withBodyReport returns the options a fetch is sent with: the caller's,
// with diagnostics on, because only they say that a body was cut at
// --max-bytes. The pipeline computes them anyway; noteTruncated drops them
// again when the caller did not ask.
func withBodyReport(opts *distillv1.FetchOptions) *distillv1.FetchOptions {
	if opts.GetDiagnostics() {
		return opts
	}
	sent := proto.CloneOf(opts)
	sent.Diagnostics = true
	return sent
}

// noteTruncated tells stderr, in one line, when a page was distilled from
// the first --max-bytes of a longer body, and removes the diagnostics the
// caller did not ask for.
func noteTruncated(g *globals, it output.BatchItem, opts *distillv1.FetchOptions) {
	d := it.Result
	if d.GetDiagnostics().GetTruncatedBody() {
		fmt.Fprintf(g.stderr, "distill: note: %s: body longer than --max-bytes; distilled its first %d bytes (raise --max-bytes for the rest)\n",
			it.URL, fetchopts.MaxBytes(opts))
	}
	if !opts.GetDiagnostics() && d != nil {
		d.Diagnostics = nil
	}
}
