//go:build !race

package scores

const raceEnabled = false
