package identitytest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// ChromiumBin is where Debian's chromium package puts the browser.
const ChromiumBin = "/usr/bin/chromium"

// Chromium starts headless Chromium at https://host:port/ of s (host a
// name or an address), with host mapped to the server's address, and
// returns a stop function that ends it. The browser's own connections are
// those s captures; it trusts the server's self-signed certificate by its
// key (a certificate error would keep it from resuming sessions).
func Chromium(ctx context.Context, s *Server, host string) (stop func(), err error) {
	return ChromiumAt(ctx, s, host, "/")
}

// ChromiumAt is Chromium opening path rather than /. The browser runs in
// a process group of its own, with a profile of its own: stop kills the
// group (its helpers too), and removes the profile as far as it can.
func ChromiumAt(ctx context.Context, s *Server, host, path string) (stop func(), err error) {
	if _, err := os.Stat(ChromiumBin); err != nil {
		return nil, fmt.Errorf("identitytest: %s: %w: install Debian's chromium package", ChromiumBin, err)
	}
	dir, err := os.MkdirTemp("", "identitytest-chromium-")
	if err != nil {
		return nil, fmt.Errorf("identitytest: profile: %w", err)
	}
	port := strconv.Itoa(s.Addr().Port)
	cmd := exec.CommandContext(ctx, ChromiumBin,
		"--headless=new", "--no-sandbox", "--ignore-certificate-errors-spki-list="+s.SPKI(), "--no-first-run",
		"--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--disable-extensions", "--metrics-recording-only", "--disable-crash-reporter",
		"--user-data-dir="+dir,
		"--host-resolver-rules=MAP "+host+" "+s.Addr().IP.String()+", EXCLUDE localhost",
		"https://"+net.JoinHostPort(host, port)+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("identitytest: start chromium: %w", err)
	}
	pid := cmd.Process.Pid
	return func() {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = cmd.Wait()
		// A helper the kernel has not yet finished killing may still hold
		// a file there: what is left is the system's temporary files'.
		_ = os.RemoveAll(dir)
	}, nil
}
