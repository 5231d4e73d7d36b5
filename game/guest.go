package game

import "strconv"

// guestPrefix starts every name the server generates.
const guestPrefix = "guest"

// maxGuestDigits is the most digits after guestPrefix that IsGuestName
// takes for a generated name.
const maxGuestDigits = 12

// GuestName is the name the join screen gives a player who enters none:
// "guest" followed by n in decimal; the join screen draws n from
// 1000..9999.
func GuestName(n int) string {
	return guestPrefix + strconv.Itoa(n)
}

// IsGuestName reports whether name has the form of a name the server
// generates: "guest" in any case, followed by 1 to 12 ASCII digits and
// nothing else ("guest1234", "GUEST42"; not "guest", "guesthouse" or
// "guest12a"). Such names belong to nobody: they are never claimed.
func IsGuestName(name string) bool {
	n := len(guestPrefix)
	if len(name) <= n || len(name) > n+maxGuestDigits {
		return false
	}
	for i := range n {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != guestPrefix[i] {
			return false
		}
	}
	for i := n; i < len(name); i++ {
		if name[i] < '0' || name[i] > '9' {
			return false
		}
	}
	return true
}
