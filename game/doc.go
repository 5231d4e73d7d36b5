// Package game owns the snaked world: one wrapping playfield, its snakes,
// fruit and bots, the rules of one tick, the read-only views published for
// renderers, and the Clock that steps it in real time. It has no terminal
// and no network. The rules never read the wall clock: Step(tick) takes the
// tick number, the Clock (its owner is the daemon's main) calls it ten times
// a second, and readers call Acquire/Release.
//
// # World
//
// The playfield is W x H pixels and wraps in both directions. A pixel is half
// a terminal cell, so snakes look equally fast in every direction. The default
// (DefaultConfig) is 2048 x 512 pixels for MaxSnakes 4096: about 256 pixels
// per snake when the server is full, i.e. a snake of length ~20 covers under
// a tenth of its share, while an 80x24 terminal (80 x 44 pixels) still shows
// a dozen or so neighbours. Area costs memory (4 bytes per pixel for the
// master grid and for each view buffer, i.e. 4 MiB each by default) but no
// time per tick: Step is O(snakes + pixels changed), never O(area) (see
// docs/BENCHMARKS-game.md).
//
// The master grid is a []Pixel updated in place; snake bodies are ring
// buffers of pixel indices that are reused across lives, and every grid
// write is logged (index, value) for the views. During a movement phase the
// spare top bits of a grid Pixel count the heads entering it; they are
// cleared before the phase ends. Step allocates nothing in steady state: a
// snake outgrowing its body ring trades it for a free ring twice as long,
// and a spawn gives a long ring back, so rings are allocated only while the
// number of long snakes alive at once still reaches new highs.
//
// # Rules of one tick
//
// Step applies, in this order:
//
//  1. Inputs queued since the last Step: leaves (the body is removed,
//     nothing turns into fruit), joins and respawn requests (the snake waits
//     for a spawn), at most one queued turn per snake (a turn into the
//     current direction or its reverse is dropped and the next queued one is
//     tried), dash requests (granted when Tick >= DashReadyAt; the snake then
//     moves DashLen=3 pixels this tick and DashReadyAt = tick+DashCooldown).
//  2. Spawns: a snake waiting for a spawn is placed as a straight line on
//     empty pixels (no body, no fruit) with 2 pixels of clearance from any
//     other snake around it (and behind) and 4 ahead (fruit there is
//     allowed), heading away from the nearest body found within 6 pixels
//     (if that direction does not fit, the randomly tried one). Its colour
//     is the palette colour least used by the bodies within 6 pixels
//     (palette: the 16 colours without black, white and greys).
//     It is protected until Tick >= ProtectedUntil (Protect ticks). If no
//     place is found (8 tries) it stays dead and is retried next tick. All
//     spawns of one tick share a budget of 1024 + MaxSnakes/8 tries, first
//     come first served; snakes left over keep their place in the queue.
//  3. Bots decide their turn: never into a body or head pixel, nor into a
//     pixel another bot chose this tick (in slot order); towards the nearest
//     fruit in a small box around the head if any, else mostly straight on,
//     with a seeded random turn (1 tick in 16) now and then. Dead bots respawn after
//     BotRespawn ticks. A bot is only input generated inside Step.
//  4. Movement in phases. Every live snake moves 1 pixel in phase 0; a
//     dashing snake also moves in phases 1 and 2. Within a phase all moves
//     are simultaneous and judged against the grid at the start of the phase:
//     - A snake with pending growth keeps its tail (growth - 1); otherwise its
//     tail pixel is vacated, and that pixel is free for any head this phase
//     (own head included), even if the tail's owner dies this phase.
//     - A head entering a body or head pixel (own included) that is not a
//     vacated tail dies; the kill is credited to the pixel's owner (no credit
//     for running into yourself). A head that did not move this phase (e.g.
//     a non-dashing snake during phases 1-2) is an ordinary obstacle.
//     - Head-on: two or more heads entering the same pixel all die, and two
//     heads swapping pixels both die. No kill is credited; KilledBy names
//     the other snake.
//     - A protected snake cannot die: if the pixel ahead holds a body or head
//     (start of phase, vacating tails included) it turns left, else right,
//     into an empty or fruit pixel; if both are blocked, or another head
//     also enters its pixel, it waits this phase (and keeps its tail). It is
//     solid: others running into it die, credited to it.
//     - A head entering fruit eats it: growth + 1 (FruitGrow).
//     - A dead snake's body (after its tail left) turns into fruit on every
//     second pixel counting from the tail, the rest becomes empty. The view
//     keeps its length, kills, head and killer until it respawns or leaves.
//  5. Fruit is topped up to the target count (Fruit) at random empty pixels
//     (bounded tries per tick).
//  6. Ranks (counting sort by length among live snakes, equal lengths share
//     a rank), the leaderboard (longest first, then lower slot), the best
//     snake of the run, then the view is published.
//
// # Views and concurrency
//
// Join/Leave/Turn/Dash/Respawn take a short mutex and only queue input; Step
// drains the queue once per tick under that mutex, so the tick waits on no
// reader. Join checks capacity and names at once; the snake appears in the
// view published by the next Step. A slot (and its capacity) freed by Leave
// is reusable after the next Step; its name is free at once.
//
// Views are published through a small pool of View buffers (at most
// maxViews = 8), each with an atomic reference count, and an atomic pointer to the
// newest. Acquire loads the newest, increments its count and re-checks that it
// is still the newest (else undoes and retries). Step only writes a buffer that
// is not the newest and has no references, so readers never see a change. The
// buffer's pixels are brought up to date by replaying the indices changed in
// the steps since it was last written (a ring of the last logN = 16 steps'
// change logs), so publishing is O(pixels changed + snakes), not O(area); a buffer
// older than the ring is copied whole (rare). If every buffer is held, Step
// skips publishing for that tick rather than wait (Skipped counts it).
// Readers must Release each view exactly once and should not hold one for
// longer than a frame: a held view pins a buffer.
//
// Randomness comes only from a PCG seeded by Config.Seed, and Step iterates
// in slot order, so the same seed and the same inputs in the same order give
// the same world.
package game
