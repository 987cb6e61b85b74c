package localcluster

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"sync"
)

// FreePort returns a loopback address nothing listens on now, for a
// process to listen on once started, and again after a restart.
//
// A port the kernel handed out for port 0 may be handed out again as soon
// as it is closed, to any listener on port 0 or outgoing connection on the
// machine: tests running side by side took each other's ports that way.
// So the port is drawn below the kernel's ephemeral range, where neither
// ever lands, and never twice in one process.
func FreePort() (string, error) {
	lo, hi := fixedPorts()
	for range 200 {
		port := 0
		if hi > lo {
			port = lo + rand.IntN(hi-lo)
			if !reserve(port) {
				continue
			}
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		addr := l.Addr().String()
		return addr, l.Close()
	}
	return "", errors.New("localcluster: no free loopback port")
}

var (
	reservedMu sync.Mutex
	reserved   = map[int]bool{}
)

// reserve reports whether port was not handed out before, and marks it.
func reserve(port int) bool {
	reservedMu.Lock()
	defer reservedMu.Unlock()
	if reserved[port] {
		return false
	}
	reserved[port] = true
	return true
}

// fixedPorts is the range FreePort draws from: the 16,384 ports below the
// kernel's ephemeral range, or none (port 0) when that range cannot be read
// or starts too low.
var fixedPorts = sync.OnceValues(func() (lo, hi int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0
	}
	var first, last int
	if _, err := fmt.Sscan(string(b), &first, &last); err != nil || first < 1024+16384 {
		return 0, 0
	}
	return first - 16384, first
})
