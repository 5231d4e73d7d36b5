package game

import "errors"

// Host is what a session needs of a world: its newest view, and a way in
// for the player's joins and inputs. A *World is one; a gateway that
// follows a simulation running elsewhere is another (views from a replica,
// inputs sent on). The renderer and the sessions read the same View from
// either and cannot tell them apart.
type Host interface {
	Acquire() *View
	Join(name string) (ID, error)
	Leave(id ID)
	Turn(id ID, d Dir)
	Dash(id ID)
	Respawn(id ID)
}

var _ Host = (*World)(nil)

// ErrUnavailable is a Host's answer to a join when the world it mirrors
// cannot be reached right now (a gateway whose simulation is restarting):
// the player may try again in a moment.
var ErrUnavailable = errors.New("game: the world is not reachable right now")

// EmptyView returns a view of no world (W and H are 0, no snakes), for a
// Host that has none yet (a gateway before its first snapshot). Release
// it like any other; the renderer draws nothing from it.
func EmptyView() *View { return &View{} }
