package scores

import "errors"

// ErrOff is the answer of a scores service that keeps no scores (a
// cluster's simulation run with -scores off): unlike any other error it
// says something for sure, that no name is claimed.
var ErrOff = errors.New("scores: off on this server")
