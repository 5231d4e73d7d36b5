// Package game is the snaked world: a wrapping playfield of snakes, fruit
// and bots, stepped one tick at a time by rules that take the tick number
// as a parameter and never read the wall clock (docs/RULES.md states
// them). A Step's work runs on Config.Workers goroutines over parts of
// the slots, with the same result whatever their number. After each Step
// the world publishes a read-only View for the renderers and keeps a Feed
// of what the step changed, for copies of the world kept elsewhere; a
// Clock calls Step in real time. The package has no terminal and no
// network.
package game
