package game

import (
	"encoding/binary"
	"fmt"
)

// DeltaBase returns the tick a delta applies to (its base): a follower
// that is past it has the delta already and drops it; one that is behind
// it missed a delta and needs a snapshot.
func DeltaBase(msg []byte) (uint64, error) {
	if len(msg) < 3 || msg[0] != WireVersion || msg[1] != msgDelta {
		return 0, fmt.Errorf("%w: not a delta", ErrCorrupt)
	}
	base, n := binary.Uvarint(msg[2:])
	if n <= 0 {
		return 0, fmt.Errorf("%w: base tick", ErrCorrupt)
	}
	return base, nil
}
