package status

import (
	"net"
	"strconv"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// sshArgOptions are OpenSSH's options that take an argument (ssh(1)):
// the word after one of them is its argument, not the destination.
const sshArgOptions = "BbcDEeFIiJLlmOoPpQRSWw"

// destination reads the host and port a join command ("ssh -p 2222
// alice@example.com", "ssh ssh://example.com:2222") connects to, as
// OpenSSH's command line has them; ok is false when join is not an ssh
// command with a destination.
func destination(join string) (host string, port int, ok bool) {
	words := strings.Fields(join)
	if len(words) == 0 || words[0] != "ssh" && !strings.HasSuffix(words[0], "/ssh") {
		return "", 0, false
	}
	port = 22
	for i := 1; i < len(words); i++ {
		w := words[i]
		if len(w) < 2 || w[0] != '-' {
			host, p, ok := splitDestination(w)
			if !ok {
				return "", 0, false
			}
			if p != 0 {
				port = p
			}
			return host, port, true
		}
		// A cluster of flags (-tt, -4A) ends with at most one that takes
		// an argument, glued on (-p2222) or the next word.
		for j := 1; j < len(w); j++ {
			if !strings.ContainsRune(sshArgOptions, rune(w[j])) {
				continue
			}
			arg := w[j+1:]
			if arg == "" {
				if i+1 >= len(words) {
					return "", 0, false
				}
				i++
				arg = words[i]
			}
			switch w[j] {
			case 'p':
				p, err := strconv.Atoi(arg)
				if err != nil || p < 1 || p > 65535 {
					return "", 0, false
				}
				port = p
			case 'o':
				if k, v, ok := strings.Cut(arg, "="); ok && strings.EqualFold(k, "port") {
					if p, err := strconv.Atoi(v); err == nil && p >= 1 && p <= 65535 {
						port = p
					}
				}
			}
			break
		}
	}
	return "", 0, false
}

// splitDestination splits [user@]host or ssh://[user@]host[:port]; port
// is 0 when the destination names none.
func splitDestination(d string) (host string, port int, ok bool) {
	uri := strings.HasPrefix(d, "ssh://")
	d = strings.TrimPrefix(d, "ssh://")
	if i := strings.LastIndexByte(d, '@'); i >= 0 {
		d = d[i+1:]
	}
	if uri {
		if h, p, err := net.SplitHostPort(d); err == nil {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 || n > 65535 {
				return "", 0, false
			}
			d, port = h, n
		}
		d = strings.TrimSuffix(strings.TrimPrefix(d, "["), "]")
	}
	if d == "" || strings.ContainsAny(d, "/ \t[]") {
		return "", 0, false
	}
	return d, port, true
}

// KnownHostsLine is the line of ~/.ssh/known_hosts that trusts key for the
// host the join command connects to ("[host]:port" when the port is not
// 22), or "" when join names no destination.
func KnownHostsLine(join string, key ssh.PublicKey) string {
	host, port, ok := destination(join)
	if !ok || key == nil {
		return ""
	}
	return knownhosts.Line([]string{net.JoinHostPort(host, strconv.Itoa(port))}, key)
}
