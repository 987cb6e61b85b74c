package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// These tests run the built binary the way a user does.

func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "distill")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func page(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><head><title>Hello</title></head><body><main><h1>Hello</h1><p>A page served on loopback for the binary to distill.</p></main></body></html>")
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestBinary(t *testing.T) {
	// Off the user's cache, which an earlier run's page on a reused port
	// could be answering from.
	t.Setenv("DISTILL_CACHE_DIR", t.TempDir())
	bin := build(t)
	srv := page(t)

	t.Run("fetch prints markdown", func(t *testing.T) {
		out, err := exec.Command(bin, "fetch", "--allow-local", srv.URL).Output()
		if err != nil {
			t.Fatalf("fetch: %v", err)
		}
		if !strings.Contains(string(out), "# Hello") || !strings.Contains(string(out), "A page served on loopback") {
			t.Errorf("output:\n%s", out)
		}
	})

	t.Run("fetch refuses loopback by default", func(t *testing.T) {
		cmd := exec.Command(bin, "fetch", srv.URL)
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != 1 || err == nil {
			t.Fatalf("exit %d, want 1; output %q", code, out)
		}
		if !strings.Contains(string(out), "blocked") {
			t.Errorf("output %q does not say the address is blocked", out)
		}
	})

	t.Run("serve answers gRPC and stops on SIGTERM", func(t *testing.T) {
		addr := freeAddr(t)
		cmd := exec.Command(bin, "serve", "--listen", addr, "--log-level", "info")
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		lines := bufio.NewScanner(stderr)
		for lines.Scan() && !strings.Contains(lines.Text(), "grpc serving") {
		}
		go func() {
			for lines.Scan() {
			}
		}()

		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := distillv1.NewDistillServiceClient(conn).Fetch(ctx, &distillv1.FetchRequest{
			Url: srv.URL, Options: &distillv1.FetchOptions{AllowLocal: true},
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.GetDistilled().GetTitle() != "Hello" {
			t.Errorf("title = %q", res.GetDistilled().GetTitle())
		}

		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve exited with %v after SIGTERM, want 0", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("serve did not stop after SIGTERM")
		}
	})
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
