// Package localcluster runs distill in cluster mode on loopback, as it
// runs in production: a NATS server process, fetcher, extractor and
// renderer processes and gateways, built from this checkout. The
// end-to-end tests break it; the cluster benchmark measures it.
package localcluster

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"distill.dev/services/platform/grpcserve"
)

// SessionKey is the gateways' shared session key (32 bytes, base64).
const SessionKey = "ZGlzdGlsbC1lMmUtc2Vzc2lvbi1rZXktMzItYnl0ZXM="

// Buffer is a log that processes write to while tests read it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Proc is one process of the cluster.
type Proc struct {
	Name string
	Args []string
	Env  []string
	// Addr is its gRPC address, or NATS's client address.
	Addr string
	// MetricsAddr is where it serves Prometheus metrics, with
	// Options.Metrics.
	MetricsAddr string
	// HTTPAddr is where a gateway serves the Firecrawl-compatible HTTP
	// API, with Options.HTTP.
	HTTPAddr string
	Log      *Buffer

	bin string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// SetBin sets the folder the process's binary is in, for processes
// started outside a Cluster.
func (p *Proc) SetBin(dir string) { p.bin = dir }

// Start starts the process with its arguments and environment.
func (p *Proc) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	cmd := exec.Command(filepath.Join(p.bin, p.Name), p.Args...)
	cmd.Env = append(os.Environ(), p.Env...)
	if p.Log == nil {
		p.Log = &Buffer{}
	}
	cmd.Stdout, cmd.Stderr = p.Log, p.Log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	done := make(chan struct{})
	p.cmd, p.done, p.err = cmd, done, nil
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		if p.cmd == cmd {
			p.err = err
		}
		p.mu.Unlock()
		close(done)
	}()
	return nil
}

// current is the process's latest run.
func (p *Proc) current() (*exec.Cmd, chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd, p.done
}

// Signal sends sig and waits for the process to end, killing it after 30
// seconds.
func (p *Proc) Signal(sig syscall.Signal) error {
	cmd, done := p.current()
	if cmd == nil || !p.Running() {
		return nil
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
		return nil
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("%s did not stop on %v within 30s", p.Name, sig)
	}
}

// Notify sends sig and returns: a signal the process handles and lives on
// (SIGHUP reloads a host policy).
func (p *Proc) Notify(sig syscall.Signal) error {
	cmd, _ := p.current()
	if cmd == nil || !p.Running() {
		return fmt.Errorf("%s is not running", p.Name)
	}
	return cmd.Process.Signal(sig)
}

// Running reports whether the process has not exited.
func (p *Proc) Running() bool {
	_, done := p.current()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// Exit is how the process ended, once it has.
func (p *Proc) Exit() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Options shape a cluster.
type Options struct {
	Fetchers int
	Gateways int
	// Workers is each fetcher's job concurrency; 0 means 8.
	Workers int
	// AckWait is the workers' ack wait; 0 means 3s.
	AckWait time.Duration
	// NoRenderer leaves the renderer out.
	NoRenderer bool
	// Metrics makes every distill process serve Prometheus metrics on a
	// port of its own.
	Metrics bool
	// HTTP makes every gateway serve the Firecrawl-compatible HTTP API
	// (serve --http) on a port of its own.
	HTTP bool
	// Env is added to every distill process's environment.
	Env []string
	// LogLevel is the fetchers' log level; empty means debug, which logs
	// every fetch for tests to read.
	LogLevel string
	// NoAllowLocal names the processes (distill, fetcher, renderer) started
	// without --allow-local; the others are started with it, since the
	// pages tests fetch are on loopback.
	NoAllowLocal []string
}

// Cluster is distill on loopback.
type Cluster struct {
	bin       string
	NATS      *Proc
	Fetchers  []*Proc
	Extractor *Proc
	Renderer  *Proc
	Gateways  []*Proc

	mu    sync.Mutex
	conns map[string]*grpc.ClientConn
}

// Start runs a cluster from the binaries in bin, keeping NATS's store in
// natsDir, and waits until every service is ready. On error, whatever was
// started is stopped.
func Start(bin, natsDir string, o Options) (c *Cluster, err error) {
	c = &Cluster{bin: bin, conns: map[string]*grpc.ClientConn{}}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w\n%s", err, c.Logs(3000))
			c.Stop()
		}
	}()
	ports := &portPicker{}
	if err := c.startNATS(ports, natsDir); err != nil {
		return c, err
	}
	starting := c.plan(ports, o.withDefaults())
	c.addFlags(starting, ports, o)
	if ports.err != nil {
		return c, ports.err
	}
	for _, p := range starting {
		if err := p.Start(); err != nil {
			return c, err
		}
	}
	for _, p := range starting {
		if err := c.WaitStatus(p, healthpb.HealthCheckResponse_SERVING, 30*time.Second); err != nil {
			return c, err
		}
	}
	return c, nil
}

// portPicker hands out free loopback ports, keeping the first error for
// its caller to check once it has asked for them all.
type portPicker struct{ err error }

func (pp *portPicker) next() string {
	addr, err := FreePort()
	if err != nil && pp.err == nil {
		pp.err = err
	}
	return addr
}

// withDefaults fills in the defaults Options documents.
func (o Options) withDefaults() Options {
	if o.AckWait == 0 {
		o.AckWait = 3 * time.Second
	}
	if o.Workers == 0 {
		o.Workers = 8
	}
	if o.LogLevel == "" {
		o.LogLevel = "debug"
	}
	return o
}

// startNATS starts the NATS server with JetStream, its store in natsDir,
// and waits until it takes clients.
func (c *Cluster) startNATS(ports *portPicker, natsDir string) error {
	c.NATS = &Proc{Name: "nats-server", Addr: ports.next(), bin: c.bin}
	host, natsPort, _ := net.SplitHostPort(c.NATS.Addr)
	c.NATS.Args = []string{"-a", host, "-p", natsPort, "-js", "-sd", natsDir}
	if err := c.NATS.Start(); err != nil {
		return err
	}
	return c.WaitNATS()
}

// plan lays out the services o asks for, each on a port of its own, and
// returns them in the order they start: the extractor, the renderer, the
// fetchers, then the gateways, which the fetchers and gateways reach
// through NATS and the first fetcher.
func (c *Cluster) plan(ports *portPicker, o Options) []*Proc {
	natsURL := "nats://" + c.NATS.Addr
	c.Extractor = &Proc{Name: "extractor", Addr: ports.next(), Env: o.Env, bin: c.bin}
	c.Extractor.Args = []string{"-listen", c.Extractor.Addr}
	starting := []*Proc{c.Extractor}
	rendererAddr := ""
	if !o.NoRenderer {
		c.Renderer = &Proc{Name: "renderer", Addr: ports.next(), Env: o.Env, bin: c.bin}
		c.Renderer.Args = []string{"-listen", c.Renderer.Addr, "-max-pages", "2"}
		rendererAddr = c.Renderer.Addr
		starting = append(starting, c.Renderer)
	}
	for range max(o.Fetchers, 1) {
		f := &Proc{Name: "fetcher", Addr: ports.next(), Env: o.Env, bin: c.bin}
		f.Args = []string{"-listen", f.Addr, "-nats", natsURL, "-extractor", c.Extractor.Addr, "-renderer", rendererAddr,
			"-no-cache", "-workers", fmt.Sprint(o.Workers), "-ack-wait", o.AckWait.String(), "-log-level", o.LogLevel}
		c.Fetchers = append(c.Fetchers, f)
		starting = append(starting, f)
	}
	for range max(o.Gateways, 1) {
		g := &Proc{Name: "distill", Addr: ports.next(), Env: append([]string{"DISTILL_SESSION_KEY=" + SessionKey}, o.Env...), bin: c.bin}
		g.Args = []string{"serve", "--cluster", "--listen", g.Addr, "--nats", natsURL, "--fetcher", c.Fetchers[0].Addr,
			"--extractor", c.Extractor.Addr, "--renderer", rendererAddr, "--log-level", "info"}
		if o.HTTP {
			g.HTTPAddr = ports.next()
			g.Args = append(g.Args, "--http", g.HTTPAddr)
		}
		c.Gateways = append(c.Gateways, g)
		starting = append(starting, g)
	}
	return starting
}

// addFlags adds the flags every process shares, spelt as each binary
// spells them (the gateway's with two dashes): --allow-local but for the
// extractor and the processes o.NoAllowLocal names, and with o.Metrics a
// metrics port of its own.
func (c *Cluster) addFlags(starting []*Proc, ports *portPicker, o Options) {
	for _, p := range starting {
		dash := "-"
		if p.Name == "distill" {
			dash = "--"
		}
		if p != c.Extractor && !slices.Contains(o.NoAllowLocal, p.Name) {
			p.Args = append(p.Args, dash+"allow-local")
		}
		if o.Metrics {
			p.MetricsAddr = ports.next()
			p.Args = append(p.Args, dash+"metrics-listen", p.MetricsAddr)
		}
	}
}

// Services are every process but NATS.
func (c *Cluster) Services() []*Proc {
	ps := []*Proc{c.Extractor}
	if c.Renderer != nil {
		ps = append(ps, c.Renderer)
	}
	ps = append(ps, c.Fetchers...)
	return append(ps, c.Gateways...)
}

// Stop ends every process, gently: the services all at once, then NATS,
// which they let go of as they stop.
func (c *Cluster) Stop() {
	c.mu.Lock()
	for _, cc := range c.conns {
		_ = cc.Close()
	}
	c.conns = map[string]*grpc.ClientConn{}
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range c.Services() {
		if p != nil {
			wg.Go(func() { _ = p.Signal(syscall.SIGTERM) })
		}
	}
	wg.Wait()
	if c.NATS != nil {
		_ = c.NATS.Signal(syscall.SIGTERM)
	}
}

// RaceReport is how a binary built with the race detector starts each
// race it reports.
const RaceReport = "WARNING: DATA RACE"

// Races returns the logs of distill's processes that reported a data race.
func (c *Cluster) Races() string {
	var b strings.Builder
	for _, p := range c.Services() {
		if p != nil && p.Log != nil && strings.Contains(p.Log.String(), RaceReport) {
			fmt.Fprintf(&b, "--- %s (%s):\n%s\n", p.Name, p.Addr, p.Log.String())
		}
	}
	return b.String()
}

// Logs returns the last n bytes of every process's log.
func (c *Cluster) Logs(n int) string {
	var b strings.Builder
	for _, p := range append(c.Services(), c.NATS) {
		if p == nil || p.Log == nil {
			continue
		}
		s := p.Log.String()
		if len(s) > n {
			s = "…" + s[len(s)-n:]
		}
		fmt.Fprintf(&b, "--- %s (%s):\n%s\n", p.Name, p.Addr, s)
	}
	return b.String()
}

// Conn is a client connection to addr, shared and closed by Stop.
func (c *Cluster) Conn(addr string) (*grpc.ClientConn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cc, ok := c.conns[addr]; ok {
		return cc, nil
	}
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(grpcserve.MaxMessageBytes)))
	if err != nil {
		return nil, err
	}
	c.conns[addr] = cc
	return cc, nil
}

// Status asks p's readiness.
func (c *Cluster) Status(p *Proc) healthpb.HealthCheckResponse_ServingStatus {
	cc, err := c.Conn(p.Addr)
	if err != nil {
		return healthpb.HealthCheckResponse_UNKNOWN
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	res, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return healthpb.HealthCheckResponse_UNKNOWN
	}
	return res.GetStatus()
}

// WaitStatus waits until p's readiness is want.
func (c *Cluster) WaitStatus(p *Proc, want healthpb.HealthCheckResponse_ServingStatus, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		got := c.Status(p)
		if got == want {
			return nil
		}
		if !p.Running() {
			return fmt.Errorf("%s exited: %v", p.Name, p.Exit())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s at %s is %v, not %v, after %s", p.Name, p.Addr, got, want, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WaitNATS waits until NATS accepts connections.
func (c *Cluster) WaitNATS() error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", c.NATS.Addr, time.Second)
		if err == nil {
			return conn.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nats at %s not up: %w", c.NATS.Addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// RestartNATS starts NATS again on the same port and store.
func (c *Cluster) RestartNATS() error {
	c.NATS = &Proc{Name: "nats-server", Addr: c.NATS.Addr, Args: c.NATS.Args, Log: c.NATS.Log, bin: c.bin}
	if err := c.NATS.Start(); err != nil {
		return err
	}
	return c.WaitNATS()
}

// Restart starts p again with the same arguments and waits until it is
// ready.
func (c *Cluster) Restart(p *Proc) error {
	if err := p.Start(); err != nil {
		return err
	}
	return c.WaitStatus(p, healthpb.HealthCheckResponse_SERVING, 30*time.Second)
}
