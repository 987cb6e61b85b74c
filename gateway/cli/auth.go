package cli

import (
	"fmt"

	"github.com/spf13/pflag"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/envflag"
	"distill.dev/services/platform/grpcauth"
)

// authFlags say who may call `distill serve`. The token lists take no
// default from the environment at registration, unlike other flags, so
// that --help never prints a secret; the variables are read when the
// flags are not given.
type authFlags struct {
	tokens, tokensFile                 string
	operatorTokens, operatorTokensFile string
	noAuth                             bool
}

func (f *authFlags) register(fs *pflag.FlagSet, env *envflag.Env) {
	fs.StringVar(&f.tokens, "api-tokens", "", envflag.Usage("bearer tokens the API accepts, comma-separated, for every call but the cache's prune and clear; the variable keeps them out of ps", envflag.APITokens))
	fs.StringVar(&f.tokensFile, "api-tokens-file", env.String(envflag.APITokensFile, ""), envflag.Usage("file of API tokens, one a line, # for comments", envflag.APITokensFile))
	fs.StringVar(&f.operatorTokens, "operator-tokens", "", envflag.Usage("bearer tokens that may make every call, CachePrune and CacheClear included, comma-separated", envflag.OperatorTokens))
	fs.StringVar(&f.operatorTokensFile, "operator-tokens-file", env.String(envflag.OperatorTokensFile, ""), envflag.Usage("file of operator tokens, one a line, # for comments", envflag.OperatorTokensFile))
	fs.BoolVar(&f.noAuth, "no-auth", false, "serve a non-loopback address without tokens (behind a proxy that authenticates)")
}

// guard is who may call the server. scoped are host mode's actor tokens,
// which may call HostService only.
func (f *authFlags) guard(env *envflag.Env, scoped ...string) (*grpcauth.Guard, error) {
	tokens, err := f.list(env, f.tokens, envflag.APITokens, "--api-tokens", f.tokensFile, "--api-tokens-file")
	if err != nil {
		return nil, err
	}
	operators, err := f.list(env, f.operatorTokens, envflag.OperatorTokens, "--operator-tokens", f.operatorTokensFile, "--operator-tokens-file")
	if err != nil {
		return nil, err
	}
	if f.noAuth && len(tokens)+len(operators)+len(scoped) > 0 {
		return nil, usagef("--no-auth contradicts the API or operator tokens given: drop one or the other")
	}
	g, err := grpcauth.New(grpcauth.Config{
		Tokens: tokens, OperatorTokens: operators,
		OperatorMethods: []string{
			distillv1.DistillService_CachePrune_FullMethodName, distillv1.DistillService_CacheClear_FullMethodName,
			// The host's own calls: approvals and reserved operations are
			// the platform's to make, never an actor's.
			distillv1.HostService_CreateApproval_FullMethodName, distillv1.HostService_RevokeApproval_FullMethodName,
			distillv1.HostService_ReserveOperation_FullMethodName, distillv1.HostService_GetOperation_FullMethodName,
		},
		ScopedTokens: scoped, ScopedPrefix: "/" + distillv1.HostService_ServiceDesc.ServiceName + "/",
	})
	if err != nil {
		return nil, usageError{err}
	}
	return g, nil
}

// exposed refuses to serve an open API on addr, where the server listens,
// unless it is loopback or --no-auth says so. addr is the listener's own,
// so a name that resolves elsewhere is judged by where it resolved.
func (f *authFlags) exposed(g *grpcauth.Guard, addr string) error {
	if !g.Enabled() && !f.noAuth && !grpcauth.Loopback(addr) {
		return fmt.Errorf("serve on %s (not loopback) needs bearer tokens: set %s (or --api-tokens-file), or pass --no-auth to serve without authentication", addr, envflag.APITokens)
	}
	return nil
}

// list is the tokens of a flag (or its variable) and of a file, the first
// bad one named by where it came from.
func (f *authFlags) list(env *envflag.Env, value string, v envflag.Var, flag, file, fileFlag string) ([]string, error) {
	from := flag
	if value == "" {
		value, _ = env.Lookup(v)
		from = string(v)
	}
	tokens := grpcauth.ParseList(value)
	if err := checkTokens(tokens, from); err != nil {
		return nil, err
	}
	if file == "" {
		return tokens, nil
	}
	more, err := grpcauth.ReadFile(file)
	if err != nil {
		return nil, usagef("%s: %v", fileFlag, err)
	}
	if err := checkTokens(more, file); err != nil {
		return nil, err
	}
	return append(tokens, more...), nil
}

func checkTokens(tokens []string, from string) error {
	if _, err := grpcauth.New(grpcauth.Config{Tokens: tokens}); err != nil {
		return usagef("%s: %v", from, err)
	}
	return nil
}
