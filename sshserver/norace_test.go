//go:build !race

package sshserver

const raceEnabled = false
