package render

import (
	"bufio"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"distill.dev/proto/failure"
)

// processesOf returns the pids of the processes started with dir as their
// profile: a browser and all its children.
func processesOf(t *testing.T, dir string) []string {
	t.Helper()
	var pids []string
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range cmdlines {
		b, err := os.ReadFile(f)
		if err == nil && strings.Contains(string(b), dir) {
			pids = append(pids, filepath.Base(filepath.Dir(f)))
		}
	}
	return pids
}

// listening returns the TCP addresses pid listens on: the sockets among its
// open files that its network namespace's tables list as listening.
func listening(t *testing.T, pid string) []string {
	t.Helper()
	inodes := map[string]bool{}
	fds, _ := filepath.Glob("/proc/" + pid + "/fd/*")
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	var out []string
	for _, table := range []string{"tcp", "tcp6"} {
		f, err := os.Open("/proc/" + pid + "/net/" + table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fields := strings.Fields(sc.Text())
			if len(fields) > 9 && fields[3] == "0A" && inodes[fields[9]] {
				out = append(out, table+" "+fields[1])
			}
		}
		_ = f.Close()
	}
	return out
}

// A DevTools port on loopback would let any page rendered with allow_local
// (or anything else on the host) list and drive every render in progress.
func TestBrowserHasNoDevToolsPort(t *testing.T) {
	t.Parallel()
	requireChromium(t)
	srv := httptest.NewServer(page("<p>rendered</p>"))
	defer srv.Close()
	r := New(discard(), WithAllowLocal(true))
	defer func() { _ = r.Close() }()
	res, err := r.Render(context.Background(), localReq(srv.URL, nil))
	if err != nil || !strings.Contains(string(res.GetHtml()), "rendered") {
		t.Fatalf("render: %v", err)
	}
	r.mu.Lock()
	inst := r.inst
	r.mu.Unlock()

	pids := processesOf(t, inst.dataDir)
	if len(pids) < 2 {
		t.Fatalf("found %d processes for %s, want the browser and its children: the check would prove nothing", len(pids), inst.dataDir)
	}
	for _, pid := range pids {
		cmdline, _ := os.ReadFile("/proc/" + pid + "/cmdline")
		if strings.Contains(string(cmdline), "--remote-debugging-port") {
			t.Errorf("process %s has a DevTools port on its command line: %s", pid, strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
		if l := listening(t, pid); len(l) > 0 {
			t.Errorf("process %s listens on TCP: %v", pid, l)
		}
	}
	if !slices.Contains(pids, strconv.Itoa(inst.pid)) {
		t.Errorf("the browser's own pid %d is not among %v", inst.pid, pids)
	}
}

// orphanEnv makes the test binary a renderer that is about to be killed
// (see TestBrowserDiesWithItsParent).
const orphanEnv = "RENDER_TEST_ORPHAN"

// orphan renders once, prints its browser's profile directory and waits
// to be killed.
func orphan() {
	srv := httptest.NewServer(page("<p>rendered</p>"))
	r := New(discard(), WithAllowLocal(true))
	if _, err := r.Render(context.Background(), localReq(srv.URL, nil)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	r.mu.Lock()
	_, _ = os.Stdout.WriteString(r.inst.dataDir + "\n")
	r.mu.Unlock()
	select {}
}

// A renderer killed without a chance to close its browser takes the
// browser with it: nothing is left running for nobody.
func TestBrowserDiesWithItsParent(t *testing.T) {
	t.Parallel()
	requireChromium(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), orphanEnv+"=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the renderer did not render: %v", err)
	}
	dir := strings.TrimSpace(line)
	defer func() { _ = os.RemoveAll(dir) }()
	if n := ourProcesses(t, dir); n == 0 {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("no process uses %s before the kill; the check would prove nothing", dir)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitGone(t, dir)
}

// A browser that dies before it answers is a one-line error naming what
// it said last, not a hang.
func TestBrowserThatFailsToStart(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "chromium")
	script := "#!/bin/sh\necho 'some noise' >&2\necho 'Missing X server or $DISPLAY' >&2\nexit 1\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r := New(discard(), WithChromium(bin), WithAllowLocal(true))
	defer func() { _ = r.Close() }()
	_, err := r.Render(context.Background(), localReq("http://127.0.0.1:1/", nil))
	if failure.CodeOf(err) != failure.RenderFailed || !strings.Contains(err.Error(), "launch chromium "+bin+": Missing X server or $DISPLAY") {
		t.Fatalf("err = %v (%v), want RenderFailed naming the binary and its last words", err, failure.CodeOf(err))
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("err is more than one line: %q", err)
	}
}
