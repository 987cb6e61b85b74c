package natsembed

import "sync"

// Shared is a process's one embedded server, started by whichever part of
// the process needs it first and shut down when the last part holding it
// lets it go. The single binary's job queue holds it (Hold), on the first
// batch or crawl; host mode's state store, when this process serves it to
// the user's other processes, starts it first at the store's folder and
// address (Start), and the queue then runs on the same server.
type Shared struct {
	mu      sync.Mutex
	srv     *Server
	holders int
	after   []func()
}

// Start starts the server with cfg and holds it for the caller. started
// is false, with no error, when the server runs already: it cannot take
// cfg's folder or address then, and the caller must start a server of its
// own.
func (s *Shared) Start(cfg Config) (srv *Server, started bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return nil, false, nil
	}
	if srv, err = Start(cfg); err != nil {
		return nil, false, err
	}
	s.srv, s.holders = srv, 1
	return srv, true, nil
}

// Hold is the server, started on a temporary folder with no listener when
// nothing started it, held for the caller.
func (s *Shared) Hold() (*Server, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv == nil {
		srv, err := Start(Config{})
		if err != nil {
			return nil, err
		}
		s.srv = srv
	}
	s.holders++
	return s.srv, nil
}

// Release lets the server go for one holder; after, when set, runs once
// the server is down (at once, when the last holder lets it go).
func (s *Shared) Release(after func()) {
	s.mu.Lock()
	if after != nil {
		s.after = append(s.after, after)
	}
	s.holders--
	if s.holders > 0 || s.srv == nil {
		s.mu.Unlock()
		return
	}
	srv, then := s.srv, s.after
	s.srv, s.after = nil, nil
	s.mu.Unlock()
	srv.Shutdown()
	for _, f := range then {
		f()
	}
}
