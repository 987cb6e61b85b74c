package host

import (
	"context"
	"errors"
	"log/slog"

	"github.com/nats-io/nats.go/jetstream"

	"distill.dev/gateway/host/llm"
)

// Config is host mode as an operator runs it.
type Config struct {
	// Policies is the policy in force, reloaded on SIGHUP.
	Policies *Policies
	// Pages is distill, which every page host mode reads goes through.
	Pages Pages
	// KeyValue holds the budgets, operations and approvals, in buckets of
	// Storage with Replicas.
	KeyValue jetstream.JetStream
	Storage  jetstream.StorageType
	Replicas int
	// Provider answers extractions and summaries; nil refuses them.
	Provider llm.Provider
	// AllowLocal is the operator's --allow-local.
	AllowLocal bool
}

// Open starts host mode: its records over cfg.KeyValue, the engine over
// them, and reloads of the policy on SIGHUP until ctx ends.
func Open(ctx context.Context, logger *slog.Logger, cfg Config) *Engine {
	cfg.Policies.ReloadOnHangup(ctx, logger)
	storage := WithStorage(cfg.Storage, cfg.Replicas)
	budgets := NewBudgets(cfg.KeyValue, storage)
	ops := NewOperations(cfg.KeyValue, storage)
	approvals := NewApprovals(cfg.KeyValue, storage)
	return NewEngine(logger, cfg.Policies, budgets, cfg.Pages, EngineConfig{
		Provider: cfg.Provider, AllowLocal: cfg.AllowLocal, Operations: ops, Approvals: approvals,
	})
}

// ProviderFromEnv is the LLM provider the environment names (lookup reads
// it); none is nil, logged as a warning, since extract and summarize are
// then refused. An error is a provider named but not usable.
func ProviderFromEnv(logger *slog.Logger, lookup func(string) (string, bool)) (llm.Provider, error) {
	cfg, err := llm.FromEnv(lookup)
	switch {
	case errors.Is(err, llm.ErrNoProvider):
		logger.Warn("host mode has no LLM provider: extract and summarize are refused", "hint", err.Error())
		return nil, nil
	case err != nil:
		return nil, err
	}
	provider, err := llm.New(cfg)
	if err != nil {
		return nil, err
	}
	logger.Info("host mode LLM provider", "provider", provider.Name())
	return provider, nil
}
