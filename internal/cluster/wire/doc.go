// Package wire is the codec that carries a game world from the process
// that steps it to the processes that render it: an Encoder turns each
// tick's game.Feed into a delta (and, with a Split, into its regional
// form: a global part and the changes of each region of a grid),
// Snapshot writes the whole world in chunks of a bounded size, and a
// Replica built from a snapshot applies the deltas in order, or the
// global part and the regions it follows, and publishes, through
// game.Views, the same Views the world does. It knows nothing of how the
// bytes travel.
package wire
