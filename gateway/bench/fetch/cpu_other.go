//go:build !unix

package fetch

import "time"

// cpuTime is not measured here; the CPU column reads zero.
func cpuTime() time.Duration { return 0 }
