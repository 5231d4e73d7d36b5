package sshserver

import (
	"strconv"
)

// quote renders a client-supplied string for logs: Go-escaped to printable
// ASCII (as inside %+q, without the outer quotes, which slog adds when
// needed) and cut to a bounded length.
func quote(s string) string {
	const max = 128
	q := strconv.QuoteToASCII(s[:min(len(s), max)])
	q = q[1 : len(q)-1]
	if len(s) > max {
		q += "...(" + strconv.Itoa(len(s)) + " bytes)"
	}
	return q
}

// validTerm reports whether t is an acceptable TERM: 1..64 bytes of
// [A-Za-z0-9._+-].
func validTerm(t string) bool {
	if len(t) == 0 || len(t) > maxTerm {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '+' || c == '-') {
			return false
		}
	}
	return true
}

// clamp bounds a client-supplied terminal dimension to 1..max.
func clamp(v uint32, max int) int {
	if v < 1 {
		return 1
	}
	if v > uint32(max) {
		return max
	}
	return int(v)
}
