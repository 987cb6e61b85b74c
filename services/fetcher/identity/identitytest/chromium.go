package identitytest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
)

// ChromiumBin is where Debian's chromium package puts the browser.
const ChromiumBin = "/usr/bin/chromium"

// Chromium starts headless Chromium at https://host:port/ of s (host a
// name or an address), with host mapped to the server's address, and
// returns a stop function that ends it. The browser's own connections are
// those s captures; it ignores the server's self-signed certificate.
func Chromium(ctx context.Context, s *Server, host, profileDir string) (stop func(), err error) {
	if _, err := os.Stat(ChromiumBin); err != nil {
		return nil, fmt.Errorf("identitytest: %s: %w: install Debian's chromium package", ChromiumBin, err)
	}
	port := strconv.Itoa(s.Addr().Port)
	cmd := exec.CommandContext(ctx, ChromiumBin,
		"--headless=new", "--no-sandbox", "--ignore-certificate-errors", "--no-first-run",
		"--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--disable-extensions", "--metrics-recording-only",
		"--user-data-dir="+profileDir,
		"--host-resolver-rules=MAP "+host+" "+s.Addr().IP.String()+", EXCLUDE localhost",
		"https://"+net.JoinHostPort(host, port)+"/")
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("identitytest: start chromium: %w", err)
	}
	return func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}, nil
}
