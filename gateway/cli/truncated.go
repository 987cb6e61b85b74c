package cli

import (
	"google.golang.org/protobuf/proto"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// withBodyReport returns the options a fetch is sent with: the caller's,
// with diagnostics on, because only they say that a body was cut at
// --max-bytes. The pipeline computes them anyway; printer.judge drops them
// again when the caller did not ask.
func withBodyReport(opts *distillv1.FetchOptions) *distillv1.FetchOptions {
	if opts.GetDiagnostics() {
		return opts
	}
	sent := proto.CloneOf(opts)
	sent.Diagnostics = true
	return sent
}
