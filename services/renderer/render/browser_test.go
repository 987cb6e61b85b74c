package render

import (
	"bufio"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
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
	r := New(discard())
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
