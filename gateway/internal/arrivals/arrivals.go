// Package arrivals serves HTTP on loopback and says when each request
// arrived by the kernel's clock: the time the request's bytes reached the
// socket (SO_TIMESTAMPNS on Linux), not the time a handler got to run. A
// test or benchmark that checks a crawler's politeness on a loaded machine
// needs the first: handlers that wait for a core run late, and run
// together, so two requests sent a delay apart can seem to arrive at
// once.
package arrivals

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

type connKey struct{}

// Listen listens on addr (TCP) and times what arrives on every connection
// it accepts; serve with Server.
func Listen(addr string) (net.Listener, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return listener{lis}, nil
}

type listener struct{ net.Listener }

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return timed(c), nil
}

// Server returns an http.Server for h whose requests Of can time.
func Server(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, c)
		},
	}
}

// Of is when r's first bytes arrived: the kernel's time when the
// connection came through Listen and Server, else now.
func Of(r *http.Request) time.Time {
	if c, ok := r.Context().Value(connKey{}).(*conn); ok {
		if t := c.arrival(); !t.IsZero() {
			return t
		}
	}
	return time.Now()
}

// conn remembers the arrival of the first bytes of each request: the
// first read after the last response was written.
type conn struct {
	net.Conn
	read func(b []byte) (int, time.Time, error)

	mu       sync.Mutex
	at       time.Time
	answered bool
}

func (c *conn) Read(b []byte) (int, error) {
	n, at, err := c.read(b)
	if n > 0 {
		c.mu.Lock()
		if c.at.IsZero() || c.answered {
			if at.IsZero() {
				at = time.Now()
			}
			c.at, c.answered = at, false
		}
		c.mu.Unlock()
	}
	return n, err
}

func (c *conn) Write(b []byte) (int, error) {
	c.mu.Lock()
	c.answered = true
	c.mu.Unlock()
	return c.Conn.Write(b)
}

func (c *conn) arrival() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}
