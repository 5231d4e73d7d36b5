package game

// Names on a terminal. A nickname is 1 to MaxName bytes of the nickname
// alphabet [A-Za-z0-9_-]: joins are sanitised to it and the bots are "bot"
// and digits. Names also come from where the world cannot vouch for them
// (the scores database, a peer on the cluster link), so every name that
// reaches a terminal goes through AppendName or CleanName, which draw a
// name of the alphabet unchanged and any other byte as '?': no control
// sequence, C1 control, DEL or broken UTF-8 gets through.

// NameByte reports whether c is in the nickname alphabet [A-Za-z0-9_-].
func NameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// AppendName appends s cut to n bytes to b, each byte outside the nickname
// alphabet as '?', for printing a name on a terminal. It allocates only
// when b has no room for the bytes.
func AppendName[S string | []byte](b []byte, s S, n int) []byte {
	for i := 0; i < len(s) && i < n; i++ {
		c := s[i]
		if !NameByte(c) {
			c = '?'
		}
		b = append(b, c)
	}
	return b
}

// CleanName is s as AppendName prints it at most MaxName bytes long, for
// a name that reaches a terminal as a string (a text or JSON answer, a
// table cell). A name already clean comes back as s (or its first MaxName
// bytes) without allocating.
func CleanName(s string) string {
	for i := 0; i < len(s) && i < MaxName; i++ {
		if !NameByte(s[i]) {
			var a [MaxName]byte
			return string(AppendName(a[:0], s, MaxName))
		}
	}
	return s[:min(len(s), MaxName)]
}
