//go:build !linux

package render

import "time"

// threadNanos falls back to wall time where there is no per-thread CPU
// clock.
func threadNanos() int64 { return time.Now().UnixNano() }
