package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"distill.dev/gateway/internal/localcluster"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/envflag"
	"distill.dev/services/platform/grpcauth"
)

const (
	testAPIToken      = "test-api-token-0123456789"
	testOperatorToken = "test-operator-token-0123456789"
)

// mapEnv is an environment of exactly vars.
func mapEnv(vars map[string]string) *envflag.Env {
	return envflag.New(func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	})
}

// startServe runs `distill serve` in this process until the test ends and
// returns its stderr.
func startServe(t *testing.T, env map[string]string, args ...string) *localcluster.Buffer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stderr localcluster.Buffer
	done := make(chan int, 1)
	go func() {
		var out localcluster.Buffer
		done <- Run(ctx, append([]string{"--cache-dir", t.TempDir(), "serve"}, args...), mapEnv(env), &out, &stderr)
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != ExitOK {
			t.Errorf("serve exited %d after its context ended; stderr:\n%s", code, stderr.String())
		}
	})
	return &stderr
}

func dialServe(t *testing.T, addr string, opts ...grpc.DialOption) distillv1.DistillServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return distillv1.NewDistillServiceClient(conn)
}

func TestServeWithTokens(t *testing.T) {
	addr, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	stderr := startServe(t, map[string]string{
		string(envflag.APITokens):      testAPIToken,
		string(envflag.OperatorTokens): testOperatorToken,
	}, "--allow-local", "--listen", addr)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	wait := grpc.WaitForReady(true)

	// Probes carry no token.
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: "liveness"}, wait); err != nil {
		t.Fatalf("health without a token: %v", err)
	}
	if !strings.Contains(stderr.String(), `msg="distill serve listening" addr=`+addr+" auth=true") {
		t.Errorf("serve did not log where it listens, with auth on:\n%s", stderr.String())
	}

	anonymous := dialServe(t, addr)
	if _, err := anonymous.CacheInfo(ctx, &distillv1.CacheInfoRequest{}, wait); status.Code(err) != codes.Unauthenticated {
		t.Errorf("CacheInfo without a token: %v, want Unauthenticated", err)
	}
	wrong := dialServe(t, addr, grpcauth.DialOption("not-the-token-0123456789"))
	if _, err := wrong.CacheInfo(ctx, &distillv1.CacheInfoRequest{}, wait); status.Code(err) != codes.Unauthenticated {
		t.Errorf("CacheInfo with a wrong token: %v, want Unauthenticated", err)
	}

	user := dialServe(t, addr, grpcauth.DialOption(testAPIToken))
	info, err := user.CacheInfo(ctx, &distillv1.CacheInfoRequest{}, wait)
	if err != nil {
		t.Fatalf("CacheInfo with an API token: %v", err)
	}
	if info.GetDir() != "" {
		t.Errorf("CacheInfo discloses the server's cache directory %q", info.GetDir())
	}
	if _, err := user.CacheClear(ctx, &distillv1.CacheClearRequest{}, wait); status.Code(err) != codes.PermissionDenied {
		t.Errorf("CacheClear with an API token: %v, want PermissionDenied", err)
	}
	if _, err := user.CachePrune(ctx, &distillv1.CachePruneRequest{}, wait); status.Code(err) != codes.PermissionDenied {
		t.Errorf("CachePrune with an API token: %v, want PermissionDenied", err)
	}

	operator := dialServe(t, addr, grpcauth.DialOption(testOperatorToken))
	if _, err := operator.CacheClear(ctx, &distillv1.CacheClearRequest{}, wait); err != nil {
		t.Errorf("CacheClear with an operator token: %v", err)
	}
	if _, err := operator.CachePrune(ctx, &distillv1.CachePruneRequest{}, wait); err != nil {
		t.Errorf("CachePrune with an operator token: %v", err)
	}

	// distill fetch --server sends DISTILL_API_TOKEN.
	site := pages(t)
	fetch := func(env map[string]string) (string, string, int) {
		var out, errOut localcluster.Buffer
		code := Run(ctx, []string{"fetch", "--server", addr, "--allow-local", site.URL + "/a"}, mapEnv(env), &out, &errOut)
		return out.String(), errOut.String(), code
	}
	out, errOut, code := fetch(map[string]string{string(envflag.APIToken): testAPIToken})
	if code != ExitOK || !strings.Contains(out, "This is page a") {
		t.Errorf("fetch --server with DISTILL_API_TOKEN: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	_, errOut, code = fetch(nil)
	if code != ExitFailure || !strings.Contains(errOut, "refused") || !strings.Contains(errOut, string(envflag.APIToken)) {
		t.Errorf("fetch --server without a token: exit %d, stderr %q; want 1 and a line naming %s", code, errOut, envflag.APIToken)
	}
	// distill map --server too: Map is an API token's call, a stream the
	// interceptors guard as they guard FetchBatch. The site has no
	// sitemap, so without the crawl the map is empty, and says so.
	mapSite := func(env map[string]string) (string, string, int) {
		var out, errOut localcluster.Buffer
		code := Run(ctx, []string{"map", "--server", addr, "--allow-local", "--no-map-crawl", site.URL + "/"}, mapEnv(env), &out, &errOut)
		return out.String(), errOut.String(), code
	}
	if out, errOut, code := mapSite(map[string]string{string(envflag.APIToken): testAPIToken}); code != ExitOK || !strings.Contains(errOut, "no URLs found for "+site.URL+"/") {
		t.Errorf("map --server with DISTILL_API_TOKEN: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, errOut, code := mapSite(nil); code != ExitFailure || !strings.Contains(errOut, string(envflag.APIToken)) {
		t.Errorf("map --server without a token: exit %d, stderr %q; want 1 and a line naming %s", code, errOut, envflag.APIToken)
	}

	// distill cache --server: info for any token, clear for an operator's.
	cache := func(token string, args ...string) (string, string, int) {
		var out, errOut localcluster.Buffer
		code := Run(ctx, append([]string{"cache"}, append(args, "--server", addr)...), mapEnv(map[string]string{string(envflag.APIToken): token}), &out, &errOut)
		return out.String(), errOut.String(), code
	}
	out, errOut, code = cache(testAPIToken, "info")
	if code != ExitOK || !strings.Contains(out, "entries: 1\n") || strings.Contains(out, "dir") {
		t.Errorf("cache info --server: exit %d, stdout %q, stderr %q; want one entry and no directory", code, out, errOut)
	}
	_, errOut, code = cache(testAPIToken, "clear")
	if code != ExitFailure || !strings.Contains(errOut, "operator token") {
		t.Errorf("cache clear --server with an API token: exit %d, stderr %q; want 1 and a line saying an operator token is needed", code, errOut)
	}
	out, errOut, code = cache(testOperatorToken, "clear")
	if code != ExitOK || !strings.HasPrefix(out, "removed 1 entries, freed ") {
		t.Errorf("cache clear --server with an operator token: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// Without tokens, serve is for this machine: open on loopback, cache calls
// included, and refused elsewhere unless --no-auth.
func TestServeWithoutTokens(t *testing.T) {
	t.Run("loopback", func(t *testing.T) {
		addr, err := localcluster.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		stderr := startServe(t, nil, "--listen", addr)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := dialServe(t, addr).CacheClear(ctx, &distillv1.CacheClearRequest{}, grpc.WaitForReady(true)); err != nil {
			t.Errorf("CacheClear on an unauthenticated loopback server: %v", err)
		}
		if !strings.Contains(stderr.String(), `msg="distill serve listening" addr=`+addr+" auth=false") {
			t.Errorf("serve did not log where it listens, with auth off:\n%s", stderr.String())
		}
	})
	t.Run("non-loopback refused", func(t *testing.T) {
		_, errOut, code := run(t, "serve", "--listen", "0.0.0.0:0")
		first, _, _ := strings.Cut(errOut, "\n")
		if code == ExitOK || !strings.Contains(first, string(envflag.APITokens)) || !strings.Contains(first, "--no-auth") {
			t.Errorf("exit %d, stderr %q; want a failure whose first line names %s and --no-auth", code, errOut, envflag.APITokens)
		}
	})
	t.Run("non-loopback with --no-auth", func(t *testing.T) {
		stderr := startServe(t, nil, "--listen", "0.0.0.0:0", "--no-auth")
		deadline := time.Now().Add(time.Minute)
		for !strings.Contains(stderr.String(), "distill serve listening") {
			if time.Now().After(deadline) {
				t.Fatalf("serve --no-auth on 0.0.0.0 did not start:\n%s", stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		if !strings.Contains(stderr.String(), "auth=false") {
			t.Errorf("serve --no-auth logged:\n%s", stderr.String())
		}
	})
	t.Run("--no-auth with tokens", func(t *testing.T) {
		t.Setenv(string(envflag.APITokens), testAPIToken)
		_, errOut, code := run(t, "serve", "--listen", "127.0.0.1:0", "--no-auth")
		if code != ExitUsage || !strings.Contains(errOut, "--no-auth contradicts") {
			t.Errorf("exit %d, stderr %q", code, errOut)
		}
	})
	t.Run("a short token", func(t *testing.T) {
		_, errOut, code := run(t, "serve", "--listen", "127.0.0.1:0", "--api-tokens", "short")
		if code != ExitUsage || !strings.Contains(errOut, "--api-tokens: token 1: 5 characters") {
			t.Errorf("exit %d, stderr %q", code, errOut)
		}
	})
}
