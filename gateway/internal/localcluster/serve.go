package localcluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"time"
)

// Served is a `distill serve --http` process started by StartServe.
type Served struct {
	// URL is the HTTP API's base URL, GRPC the gRPC API's address.
	URL    string
	GRPC   string
	cmd    *exec.Cmd
	cancel context.CancelFunc
	stderr Buffer
}

// StartServe runs bin's `distill serve` with the HTTP API on free loopback
// ports, a fetch cache in cacheDir, loopback pages allowed, and env added
// to the process's environment. It returns once the HTTP port accepts
// connections, within a minute.
func StartServe(bin, cacheDir string, env ...string) (*Served, error) {
	grpcAddr, err := FreePort()
	if err != nil {
		return nil, err
	}
	httpAddr, err := FreePort()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Served{URL: "http://" + httpAddr, GRPC: grpcAddr, cancel: cancel}
	s.cmd = exec.CommandContext(ctx, bin, "--cache-dir", cacheDir, "serve", "--listen", grpcAddr, "--http", httpAddr, "--allow-local")
	s.cmd.Env = append(os.Environ(), env...)
	s.cmd.Stderr = &s.stderr
	if err := s.cmd.Start(); err != nil {
		cancel()
		return nil, err
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", httpAddr); err == nil {
			c.Close()
			return s, nil
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("distill serve --http %s did not listen within a minute:\n%s", httpAddr, s.stderr.String())
		}
	}
}

// Stop ends the process and waits for it.
func (s *Served) Stop() {
	s.cancel()
	_ = s.cmd.Wait()
}

// Stderr is what the process has written to its standard error.
func (s *Served) Stderr() string { return s.stderr.String() }
