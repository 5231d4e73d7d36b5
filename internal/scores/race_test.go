//go:build race

package scores

// raceEnabled: the race detector slows the writer's commits several times.
const raceEnabled = true
