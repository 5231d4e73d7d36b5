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
// a terminal cell, so snakes look equally fast in every direction. A
// server's size comes from AutoSize (see Population); DefaultConfig keeps
// 2048 x 512 pixels for MaxSnakes 4096: about 256 pixels per snake when
// full, i.e. a snake of length ~20 covers under a tenth of its share, while
// an 80x24 terminal (80 x 44 pixels) still shows a dozen or so neighbours,
// and no BotTarget. Area costs memory (4 bytes per pixel for the
// master grid and for each view buffer, i.e. 4 MiB each by default) but no
// time per tick: Step is O(snakes + pixels changed), never O(area) (see
// docs/BENCHMARKS.md).
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
// # Population
//
// AutoSize(capacity) is the world for a server of capacity players: about
// 350 pixels per player (2048x512 for 3,000, the size every load figure in
// docs/ was measured at), four times as wide as high, the height a multiple
// of 8, never smaller than 512x128 (about three screens high and six wide,
// so a tiny server still has room to roam without seeing its own tail
// around the wrap) and never past MaxSide x MaxSide/4 (W*H <= MaxPixels).
// AutoSize(100) is 512x128, AutoSize(10000) 3744x936.
//
// AutoBotTarget(w, h) is the population (people and bots) for one snake per
// PxPerSnake = 2,048 pixels: 512 on 2048x512, 32 on 512x128. An 80x24
// terminal's playfield is 80 x 44 = 3,520 pixels, so snakes spread evenly
// would put 1.7 heads on it; bodies (~20 pixels long) reach in from
// outside and spawns near the action cluster a little, and the measured
// mean is about 2 other snakes on a newcomer's screen over its first 30 s
// (TestContactTime, docs/BENCHMARKS.md): the middle of the
// one-to-three we want. Measured the same way, one snake per 1,024 pixels
// shows 3.9 and one per 4,096 shows 1.0 (and on 2048x512 a tenth of
// newcomers then wait 3 s or more for a head on screen).
//
// Config.Bots is a floor and Config.BotTarget a target: the world keeps
// max(Bots, BotTarget - players) bots (alive, dead or waiting for a spawn),
// where players counts people alive or dead. New puts the first bots in at
// once; afterwards, when people leave, bots are added up to that number at
// most 4 a tick, with the lowest free numbers (bot1, bot2, ...: a bot's name
// is "bot" and its number, and people may not take such names). When people
// join, the surplus bots step aside in three ways, each only while there is
// a surplus: a bot waiting for a spawn leaves at once; a bot that dies
// leaves instead of respawning; and each tick populate looks at the next 2
// bots (round robin) and retires the first live one no player can see (no
// player's head within 160 + its length columns and 96 + its length rows of
// its head: with the renderer's default dead zone, the head stays in the
// central half of the screen, so this covers terminals up to about 200x60);
// its body goes without leaving fruit. Bots never go below the floor.
//
// MaxSnakes counts people and bots. With MaxSnakes = sessions + max(Bots,
// BotTarget) (as the daemon sets it), bots never take a slot a person
// needs: there are never more bots than max(Bots, BotTarget). A caller that
// sets MaxSnakes lower still never has a join refused because of the
// surplus: a Join that finds every slot taken takes the slot of the newest
// bot above the floor (its snake disappears in the next Step), and returns
// ErrFull only when players and the floor's bots fill MaxSnakes.
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
//     Then the bots are brought towards their number (see Population).
//  2. Spawns: a snake waiting for a spawn is placed as a straight line on
//     empty pixels (no body, no fruit) with 2 pixels of clearance from any
//     other snake around it (and behind) and 4 ahead (fruit there is
//     allowed), heading away from the nearest body found within 6 pixels
//     (if that direction does not fit, the randomly tried one). Its colour
//     is the palette colour least used by the bodies within 6 pixels
//     (palette: the 16 colours without black, white and greys).
//     It is protected until Tick >= ProtectedUntil (Protect ticks). Spawns
//     go near the action: each of the first 4 of a snake's 8 tries picks a
//     random place and keeps it if the head of a live snake of the last
//     tick is within 40 columns and 22 rows of it (on the screen of an
//     80x24 terminal centred there); if none is, it tries instead near the
//     head of a live snake chosen at random, on the torus not within 20
//     columns and 11 rows of it at once, and at most 36 columns and 19 rows
//     away for a person (so the other head is on the newcomer's first
//     screen) or 60 columns and 33 rows for a bot (between half a screen
//     and a screen and a half). The other 4 tries go anywhere. So in a busy
//     world spawns spread about as evenly as the snakes do (TestSpawnsSpread;
//     putting every spawn next to someone piles them up), and in an empty
//     one they go where the others are. (The bots New puts in go anywhere:
//     there is nobody to be near yet.) If no place is
//     found it stays dead and is retried next tick. All spawns of one tick
//     share a budget of 1024 + MaxSnakes/8 tries, first come first served;
//     snakes left over keep their place in the queue.
//  3. Bots decide (see decide in bots.go): each scores going straight on,
//     towards the nearest fruit it has seen (not behind it), an occasional
//     random turn and, for a bold bot (half of them), a cut-off of a rival
//     heading the same way just behind and beside it; it takes the best
//     direction whose next pixel is free (no body or head, no pixel another
//     head chose this tick) with 3 free pixels in a row from there, else
//     compares the room behind each (a flood fill of up to 16 pixels) so it
//     does not steer into a dead end. A bold bot whose dash is ready dashes
//     now and then towards fruit straight ahead, or to cut a rival off.
//     Dead bots respawn after BotRespawn ticks, or step aside (see
//     Population). A bot is only input generated inside Step, and its
//     choices come from the world's seeded generator.
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
// # Kill feed
//
// Every death is recorded as a Kill in a ring of the world's last MaxKills
// deaths, in the order they happened (a tick's deaths in slot order).
// Publishing copies into View.Kills the deaths of the last KillTicks ticks
// (Tick+KillTicks > View.Tick) that the ring holds, oldest first, at most
// MaxKills: the newest when there were more. A kill credited to another
// snake's body or head has Killer, KillerSlot and KillerBot set; a head-on
// (two heads into one pixel, or swapping pixels) has HeadOn and Other (the
// other snake's name, "" if it cannot be told) and no killer; running into
// one's own body has Killer "" and KillerSlot -1. The copy is rebuilt at
// each publish into the view's own slice (capacity MaxKills), so it costs
// no allocation and does not depend on how many ticks old the buffer being
// rewritten was. Names in a Kill stay as they were when the snake died,
// even after it leaves.
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
// Each view also says what changed, so that a reader redraws only that:
// per tile, the tick of its last change (Dirty); the tiles the last step
// changed (Fresh); and those cells themselves with their pixels (FreshX,
// FreshAt, FreshPix, and FreshBlk to find a column without a search),
// which a reader that drew the tick before walks without touching Pix.
// Readers must Release each view exactly once and should not hold one for
// longer than a frame: a held view pins a buffer.
//
// Randomness comes only from a PCG seeded by Config.Seed, and Step iterates
// in slot order, so the same seed and the same inputs in the same order give
// the same world.
package game
