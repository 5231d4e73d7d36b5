//go:build race

package sshserver

// raceEnabled: the race detector is on (sync.Pool then drops a quarter of
// what is put back, so allocation counts do not hold).
const raceEnabled = true
