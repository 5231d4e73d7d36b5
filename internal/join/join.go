// Package join owns how a player gets a name: the rules a nickname follows
// and the join screen that asks for one when the SSH user name will not do
// (Model, a bubbletea model; the session runs it in a tea.Program and feeds
// it the keys it decodes).
package join

import (
	"strings"

	"snaked/game"
)

// MaxName is the longest nickname in bytes.
const MaxName = game.MaxName

// Sanitize keeps the bytes of s that may appear in a nickname
// (game.NameByte: [A-Za-z0-9_-]) and cuts the result to MaxName bytes. It
// never looks at more than a bounded prefix of s.
func Sanitize(s string) string {
	var b [MaxName]byte
	n := 0
	for i := 0; i < len(s) && i < 4096 && n < MaxName; i++ {
		if game.NameByte(s[i]) {
			b[n] = s[i]
			n++
		}
	}
	return string(b[:n])
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

// Usable reports whether a sanitised user name can be used without asking.
func Usable(n string) bool {
	return n != "" && !generic[strings.ToLower(n)]
}

const prompt = "Pick a nickname: "
