package sshserver

import (
	"strconv"
	"strings"
)

// maxNick is the longest nickname in bytes.
const maxNick = 16

// sanitizeNick keeps the bytes of s that may appear in a nickname
// ([A-Za-z0-9_-]) and cuts the result to maxNick bytes. It never looks at
// more than a bounded prefix of s.
func sanitizeNick(s string) string {
	var b [maxNick]byte
	n := 0
	for i := 0; i < len(s) && i < 4096 && n < maxNick; i++ {
		if nickByte(s[i]) {
			b[n] = s[i]
			n++
		}
	}
	return string(b[:n])
}

// nickByte reports whether c may appear in a nickname.
func nickByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// generic logins people type out of habit; they make poor nicknames.
var generic = map[string]bool{
	"root": true, "admin": true, "administrator": true, "ubuntu": true, "user": true,
	"pi": true, "guest": true, "test": true, "debian": true, "centos": true,
	"ec2-user": true, "fedora": true, "git": true, "ssh": true, "default": true,
	"login": true, "nobody": true, "oracle": true, "postgres": true, "ftp": true,
	"alpine": true, "arch": true, "vagrant": true, "docker": true, "www-data": true,
	"snake": true, "snaked": true, "play": true, "anonymous": true,
}

// usableNick reports whether a sanitised username can be used without asking.
func usableNick(n string) bool {
	return n != "" && !generic[strings.ToLower(n)]
}

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
	if len(t) == 0 || len(t) > 64 {
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
