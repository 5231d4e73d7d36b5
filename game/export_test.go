package game

// SetMinPar sets the fewest snakes a pass runs on the workers for, and
// returns a function that puts it back.
func SetMinPar(n int) (undo func()) {
	old := minPar
	minPar = n
	return func() { minPar = old }
}
