//go:build race

package game_test

func init() { raceOn = true }
