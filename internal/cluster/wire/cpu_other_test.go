//go:build !linux

package wire

import "time"

// threadNanos falls back to wall time where there is no thread CPU clock.
func threadNanos() int64 { return time.Now().UnixNano() }
