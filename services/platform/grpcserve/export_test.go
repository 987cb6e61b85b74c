package grpcserve

import "time"

// SetReadinessInterval makes s check readiness every d: tests do not wait
// two seconds for a change.
func SetReadinessInterval(s *Server, d time.Duration) { s.readyEvery = d }
