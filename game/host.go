package game

import "errors"

// Host is what a session needs of a world: its newest view, and a way in
// for the player's joins and inputs. World.Host is one; a gateway that
// follows a simulation running elsewhere is another (views from a replica,
// inputs sent on). The renderer and the sessions read the same View from
// either and cannot tell them apart.
//
// Inputs and leaves name the Seat the join gave, not a bare ID: a host
// whose world can restart elsewhere (a gateway's) checks the whole seat,
// so no input reaches a snake its session did not join, even when a new
// world hands out the same ID.
type Host interface {
	Acquire() *View
	// Join adds a player named name; key is the fingerprint of the key
	// the player authenticated with ("" for none), kept with the snake.
	Join(name, key string) (Seat, error)
	Leave(Seat)
	Turn(Seat, Dir)
	Dash(Seat)
	Respawn(Seat)
}

// Seat is one join's snake: the ID its views carry, which world and which
// join gave it, and from which tick that world's views show it. A local
// world's seats carry no world and no join.
type Seat struct {
	ID    ID
	World uint64 // the world instance that gave the snake (a simulation's); 0 for a local world
	Join  uint64 // the join among its host's; 0 for a local world
	Tick  uint64 // views of World (View.World) before this tick do not show the snake yet
}

// Host returns w as a Host: seats are its IDs.
func (w *World) Host() Host { return localHost{w} }

// localHost is a World as a Host.
type localHost struct{ w *World }

func (h localHost) Acquire() *View { return h.w.Acquire() }

func (h localHost) Join(name, _ string) (Seat, error) {
	id, from, err := h.w.JoinNear(name, 0)
	return Seat{ID: id, Tick: from}, err
}

func (h localHost) Leave(s Seat)       { h.w.Leave(s.ID) }
func (h localHost) Turn(s Seat, d Dir) { h.w.Turn(s.ID, d) }
func (h localHost) Dash(s Seat)        { h.w.Dash(s.ID) }
func (h localHost) Respawn(s Seat)     { h.w.Respawn(s.ID) }

// ErrUnavailable is a Host's answer to a join when the world it mirrors
// cannot be reached right now (a gateway whose simulation is restarting):
// the player may try again in a moment.
var ErrUnavailable = errors.New("game: the world is not reachable right now")

// EmptyView returns a view of no world (W and H are 0, no snakes), for a
// Host that has none yet (a gateway before its first snapshot). Release
// it like any other; the renderer draws nothing from it.
func EmptyView() *View { return &View{} }
