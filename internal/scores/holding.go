package scores

import (
	"context"
	"errors"
	"time"
)

// Holding is who holds a name, as one key (or a keyless player) sees it:
// never which other key, so an answer given over the cluster's link
// tells nobody another player's fingerprint.
type Holding uint8

// Holdings.
const (
	Free   Holding = iota + 1 // nobody holds a live claim on it
	Yours                     // the asking key does
	Others                    // another key does
)

// String returns "free", "yours" or "others".
func (h Holding) String() string {
	switch h {
	case Free:
		return "free"
	case Yours:
		return "yours"
	case Others:
		return "others"
	}
	return "Holding(?)"
}

// Errors a scores service answers besides a store's own.
var (
	// ErrOff is the answer of a scores service that keeps no scores (a
	// cluster's simulation run with -scores off): unlike any other error
	// it says something for sure, that no name is claimed.
	ErrOff = errors.New("scores: off on this server")
	// ErrClaimed says a name belongs to another key than the one that
	// asked to play it (a simulation refusing a gateway's join).
	ErrClaimed = errors.New("scores: the name belongs to another key")
	// ErrUnchecked says a name's holder could not be learnt now (the
	// store is away, a question timed out): the name is not handed out.
	ErrUnchecked = errors.New("scores: names cannot be checked right now")
)

// Holding says who holds a live claim on name (case ignored) as the key
// fp sees it ("" for a keyless player, to whom any holder is another).
// The names the server generates are always Free.
func (s *Store) Holding(ctx context.Context, name, fp string, now time.Time) (Holding, error) {
	owner, ok, err := s.Owner(ctx, name, now)
	switch {
	case err != nil:
		return 0, err
	case !ok:
		return Free, nil
	case fp != "" && owner == fp:
		return Yours, nil
	}
	return Others, nil
}
