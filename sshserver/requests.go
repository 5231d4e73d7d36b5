package sshserver

import (
	"encoding/binary"
	"strings"

	"golang.org/x/crypto/ssh"

	"snaked/render"
)

// handle answers one of the session channel's requests; the connection's
// control loop calls it, at any time, before the shell too. A panic ends
// the session (refusing the request); it never reaches the connection.
func (s *session) handle(r *ssh.Request) {
	ok := false
	func() {
		defer s.guard("requests")
		ok = s.request(r.Type, r.Payload)
	}()
	if r.WantReply {
		r.Reply(ok, nil)
	}
	if ok && (r.Type == "shell" || r.Type == "exec") {
		close(s.started) // after the reply: the client sees it before any output
	}
}

// request applies one channel request and reports whether it is granted.
func (s *session) request(typ string, p []byte) bool {
	switch typ {
	case "pty-req":
		term, p, ok1 := parseString(p)
		cols, p, ok2 := parseUint32(p)
		rows, _, ok3 := parseUint32(p)
		if !ok1 || !ok2 || !ok3 {
			return false
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.shell {
			return false
		}
		if validTerm(term) {
			s.term = term
		} else {
			s.term = ""
			s.c.log.Debug("ignored TERM", "term", quote(term))
		}
		s.pty = true
		s.cols, s.rows = clamp(cols, render.MaxCols), clamp(rows, render.MaxRows)
		s.resized = true
		return true
	case "window-change":
		cols, p, ok1 := parseUint32(p)
		rows, _, ok2 := parseUint32(p)
		if !ok1 || !ok2 {
			return false
		}
		s.mu.Lock()
		s.cols, s.rows = clamp(cols, render.MaxCols), clamp(rows, render.MaxRows)
		s.resized = true // applied by the next frame
		s.mu.Unlock()
		return true
	case "env":
		name, p, ok1 := parseString(p)
		value, _, ok2 := parseString(p)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.envReqs++
		if !ok1 || !ok2 || s.envReqs > maxEnvReqs || s.shell || !keepEnv(name) || !printable(value) {
			return false
		}
		kv := name + "=" + value
		for i, e := range s.env {
			if strings.HasPrefix(e, name+"=") {
				s.env[i] = kv
				return true
			}
		}
		if len(s.env) >= maxEnvKept {
			return false
		}
		s.env = append(s.env, kv)
		return true
	case "shell", "exec":
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.shell {
			return false
		}
		s.shell = true
		// exec never runs anything: the session prints how to play and
		// exits with status 1.
		s.exec = typ == "exec"
		if s.exec {
			s.cmd = execCommand(p)
		}
		return true
	}
	// subsystem, x11-req, auth-agent-req@openssh.com, signal, break, ...
	s.srv.m.rejections.WithLabelValues(refuseRequest.String()).Inc()
	return false
}

// keepEnv reports whether an env variable matters for colour detection.
func keepEnv(name string) bool {
	switch name {
	case "TERM", "COLORTERM", "TERM_PROGRAM", "TERM_PROGRAM_VERSION", "LANG", "NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE":
		return true
	}
	return strings.HasPrefix(name, "LC_") && len(name) <= 32 && printable(name)
}

// printable reports whether v is at most maxEnvValue bytes of printable ASCII.
func printable(v string) bool {
	if len(v) > maxEnvValue {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return false
		}
	}
	return true
}

// parseString reads an SSH string (uint32 length, bytes).
func parseString(p []byte) (string, []byte, bool) {
	n, p, ok := parseUint32(p)
	if !ok || uint64(n) > uint64(len(p)) {
		return "", nil, false
	}
	return string(p[:n]), p[n:], true
}

// parseUint32 reads a big-endian uint32.
func parseUint32(p []byte) (uint32, []byte, bool) {
	if len(p) < 4 {
		return 0, nil, false
	}
	return binary.BigEndian.Uint32(p), p[4:], true
}

// maxCommand bounds the exec command kept; longer ones are no command.
const maxCommand = 256

// execCommand is the command of an exec request's payload (an SSH string),
// or "" when it is malformed, too long or not printable.
func execCommand(payload []byte) string {
	if len(payload) < 4 {
		return ""
	}
	n := binary.BigEndian.Uint32(payload)
	if n > maxCommand || int(n) != len(payload)-4 || !printable(string(payload[4:])) {
		return ""
	}
	return string(payload[4:])
}
