package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"distill.dev/gateway/api"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/cache"
	"distill.dev/services/platform/envflag"
)

// defaultPruneSecs is `cache prune`'s age when --older-than is not given:
// the API's, so the CLI and CachePrune agree.
const defaultPruneSecs = int64(api.DefaultPruneAge / time.Second)

func newCacheCmd(g *globals) *cobra.Command {
	var server string
	cmd := &cobra.Command{
		Use:   "cache <action>",
		Short: "Inspect or empty the on-disk fetch cache",
		Long: "Inspect or empty the on-disk fetch cache, which keeps successful fetch answers\n" +
			"for --cache-ttl seconds. It lives in --cache-dir, $" + string(envflag.CacheDir) + ", or distill\n" +
			"under the user cache directory. The exit code is 1 when the cache cannot be\n" +
			"read or changed.\n\n" +
			"With --server the cache is that of a distill serve, reached over gRPC with the\n" +
			"token in " + string(envflag.APIToken) + "; prune and clear need an operator token there.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("cache needs an action: info, prune or clear")
		},
	}
	cmd.AddCommand(newCacheInfoCmd(g, &server), newCachePruneCmd(g, &server), newCacheClearCmd(g, &server))
	cmd.PersistentFlags().StringVar(&server, "server", g.env.String(envflag.Server, ""), envflag.Usage("the cache of the distill server at this gRPC address, host:port, instead of this machine's", envflag.Server))
	return cmd
}

// remoteCache runs call on the gateway at addr.
func remoteCache(cmd *cobra.Command, g *globals, addr string, call func(context.Context, distillv1.DistillServiceClient) error) error {
	gw, err := dialGateway(g.env, addr)
	if err != nil {
		return usageError{err}
	}
	defer gw.Close()
	if err := call(cmd.Context(), gw.client); err != nil {
		return gw.fail(err)
	}
	return nil
}

// openCache opens the cache directly: its commands need no fetcher.
func openCache(g *globals, action string) (*cache.Cache, error) {
	c, err := cache.Open(g.cacheDir)
	if err != nil {
		return nil, fmt.Errorf("cache %s: %w", action, err)
	}
	return c, nil
}

func newCacheInfoCmd(g *globals, server *string) *cobra.Command {
	return &cobra.Command{
		Use:   "info",
		Short: "Show the cache's entry count, total size and directory",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if *server != "" {
				// A server does not say where its cache lives.
				return remoteCache(cmd, g, *server, func(ctx context.Context, c distillv1.DistillServiceClient) error {
					res, err := c.CacheInfo(ctx, &distillv1.CacheInfoRequest{})
					if err != nil {
						return err
					}
					_, err = fmt.Fprintf(g.stdout, "entries: %d\nbytes:   %d\n", res.GetEntries(), res.GetTotalBytes())
					return err
				})
			}
			c, err := openCache(g, "info")
			if err != nil {
				return err
			}
			entries, bytes, err := c.Info()
			if err != nil {
				return fmt.Errorf("cache info: %w", err)
			}
			_, err = fmt.Fprintf(g.stdout, "entries: %d\nbytes:   %d\ndir:     %s\n", entries, bytes, c.Dir())
			return err
		},
	}
}

func newCachePruneCmd(g *globals, server *string) *cobra.Command {
	var olderThan int64
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Remove entries older than --older-than seconds",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if olderThan < 0 {
				return usagef("--older-than must not be negative, got %d", olderThan)
			}
			if *server != "" {
				return remoteCache(cmd, g, *server, func(ctx context.Context, c distillv1.DistillServiceClient) error {
					res, err := c.CachePrune(ctx, &distillv1.CachePruneRequest{OlderThanSecs: &olderThan})
					if err != nil {
						return err
					}
					return printRemoved(g, res.GetRemoved(), res.GetFreedBytes())
				})
			}
			c, err := openCache(g, "prune")
			if err != nil {
				return err
			}
			removed, freed, err := c.Prune(cache.Seconds(olderThan))
			if err != nil {
				return fmt.Errorf("cache prune: %w", err)
			}
			return printRemoved(g, removed, freed)
		},
	}
	cmd.Flags().Int64Var(&olderThan, "older-than", defaultPruneSecs, "remove entries stored at least this many seconds ago")
	return cmd
}

func newCacheClearCmd(g *globals, server *string) *cobra.Command {
	return &cobra.Command{
		Use:   "clear",
		Short: "Remove every cached entry",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if *server != "" {
				return remoteCache(cmd, g, *server, func(ctx context.Context, c distillv1.DistillServiceClient) error {
					res, err := c.CacheClear(ctx, &distillv1.CacheClearRequest{})
					if err != nil {
						return err
					}
					return printRemoved(g, res.GetRemoved(), res.GetFreedBytes())
				})
			}
			c, err := openCache(g, "clear")
			if err != nil {
				return err
			}
			removed, freed, err := c.Clear()
			if err != nil {
				return fmt.Errorf("cache clear: %w", err)
			}
			return printRemoved(g, removed, freed)
		},
	}
}

func printRemoved(g *globals, removed, freed int64) error {
	_, err := fmt.Fprintf(g.stdout, "removed %d entries, freed %d bytes\n", removed, freed)
	return err
}
