// Package natsembed runs a NATS server with JetStream inside the process, for
// the single binary and for tests. Clients reach it through an in-process
// connection: no port is opened, unless Config.Listen asks for one so that
// other processes of the machine share the server.
package natsembed

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// MaxPayload is the largest message the embedded server accepts. A batch
// result carries a whole distilled page, so the NATS default of 1 MiB is too
// small; 64 MiB is the server's ceiling.
const MaxPayload = 64 << 20

// readyTimeout bounds the server's start.
const readyTimeout = 10 * time.Second

// Server is a running embedded NATS server.
type Server struct {
	ns *server.Server
	// tempDir is the store directory Start made, removed on shutdown.
	tempDir string
	token   string
}

// Config configures the embedded server.
type Config struct {
	// StoreDir is where JetStream keeps file-backed streams; empty uses a
	// temporary directory the server removes on shutdown.
	StoreDir string
	// Listen, when set, serves clients over TCP too, at this host:port
	// (port 0: any free port), for other processes; set Token with it.
	Listen string
	// Token is what every client must present, in-process ones included.
	Token string
}

// Start starts a server and waits until it accepts connections.
func Start(cfg Config) (*Server, error) {
	// Left empty, nats-server would use one directory under the system's
	// temporary folder for every process on the machine.
	var tempDir string
	if cfg.StoreDir == "" {
		dir, err := os.MkdirTemp("", "distill-nats-")
		if err != nil {
			return nil, fmt.Errorf("embedded nats: store directory: %w", err)
		}
		tempDir, cfg.StoreDir = dir, dir
	}
	opts := &server.Options{
		ServerName:    "distill-embedded",
		DontListen:    true,
		JetStream:     true,
		StoreDir:      cfg.StoreDir,
		MaxPayload:    MaxPayload,
		NoSigs:        true,
		NoLog:         true,
		Authorization: cfg.Token,
	}
	if cfg.Listen != "" {
		host, port, err := net.SplitHostPort(cfg.Listen)
		n, perr := strconv.Atoi(port)
		if err != nil || perr != nil || n < 0 || n > 65535 {
			removeTemp(tempDir)
			return nil, fmt.Errorf("embedded nats: listen address %q is not host:port", cfg.Listen)
		}
		if n == 0 {
			n = server.RANDOM_PORT
		}
		opts.DontListen, opts.Host, opts.Port = false, host, n
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		removeTemp(tempDir)
		return nil, fmt.Errorf("embedded nats: %w", err)
	}
	s := &Server{ns: ns, tempDir: tempDir, token: cfg.Token}
	log := &fatalLog{}
	ns.SetLogger(log, false, false)
	ns.Start()
	if msg := log.message(); msg != "" {
		s.Shutdown()
		return nil, fmt.Errorf("embedded nats: %s", msg)
	}
	if !ns.ReadyForConnections(readyTimeout) {
		s.Shutdown()
		return nil, fmt.Errorf("embedded nats: not ready after %s", readyTimeout)
	}
	return s, nil
}

// Connect opens an in-process client connection.
func (s *Server) Connect(name string) (*nats.Conn, error) {
	opts := []nats.Option{nats.InProcessServer(s.ns), nats.Name(name)}
	if s.token != "" {
		opts = append(opts, nats.Token(s.token))
	}
	nc, err := nats.Connect("", opts...)
	if err != nil {
		return nil, fmt.Errorf("connect embedded nats: %w", err)
	}
	return nc, nil
}

// Addr is where the server listens for other processes (Config.Listen),
// or nil.
func (s *Server) Addr() net.Addr { return s.ns.Addr() }

// Shutdown stops the server and waits for it.
func (s *Server) Shutdown() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
	removeTemp(s.tempDir)
}

func removeTemp(dir string) {
	if dir != "" {
		_ = os.RemoveAll(dir)
	}
}

// fatalLog keeps the server's first fatal message and drops the rest of
// its log. nats-server stops starting after one (JetStream refusing its
// store, say); without it that would only show as a start that never
// completes.
type fatalLog struct {
	mu  sync.Mutex
	msg string
}

func (l *fatalLog) Fatalf(format string, v ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.msg == "" {
		l.msg = fmt.Sprintf(format, v...)
	}
}

func (l *fatalLog) message() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.msg
}

func (*fatalLog) Noticef(string, ...any) {}
func (*fatalLog) Warnf(string, ...any)   {}
func (*fatalLog) Errorf(string, ...any)  {}
func (*fatalLog) Debugf(string, ...any)  {}
func (*fatalLog) Tracef(string, ...any)  {}
