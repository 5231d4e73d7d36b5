// Package scores owns the scores database: one SQLite file (through the
// pure-Go driver modernc.org/sqlite) holding each identity's lifetime record,
// its best length per UTC day, and the name claims of players with keys.
//
// An identity is a key fingerprint ("SHA256:...", kind Key) or, for a player
// without a key, the name in lower case (kind Keyless). Per identity the store
// keeps the display name last used, best length, total kills, deaths, games,
// time played and first and last seen; per identity and UTC day the best
// length of that day. It keeps no addresses.
//
// A name is claimed by a key (Claim) and held until the claim lapses,
// ClaimTTL (30 days) after its last use, a claim or a game under it; a
// lapsed claim is not held, and claiming it again is a new claim. A key
// holds at most NamesPerKey (3) names: a new claim beyond releases its
// least recently played one in the same transaction. Names of the form the
// server generates (game.IsGuestName: "guest" and 1 to 12 digits) are never
// claimed and belong to nobody. New claims are bounded per source, an
// opaque address the caller passes ("" is unknown and not limited):
// ClaimsPerHour (60) at once, one back every hour/ClaimsPerHour, a token
// bucket kept in memory only; buckets that refilled are dropped, at most
// 65,536 sources are tracked, and past them new sources share one bucket
// until entries refill. Refreshing a name the key holds never counts and is
// never refused.
//
// The game never waits on the database: Record puts a finished game on a
// bounded queue and returns at once (a full queue drops the result and counts
// it); one writer goroutine, owned by the Store and stopped by Close, commits
// the queue in one transaction about once a second (Options.FlushEvery). The
// database runs in WAL mode, so a kill -9 loses at most the games queued
// since the last commit.
//
// Open migrates the schema (PRAGMA user_version, one transaction per
// migration), moves a corrupt file aside to <name>.corrupt-<timestamp> and
// starts a fresh one, and, when the database cannot be used (a file it may
// not write, a full disk, a schema newer than this package), returns a
// disabled Store with the error, so the game runs on without scores: Err
// says why, Claim, the queries and Backup report ErrDisabled, and Record
// keeps results on its queue (a full queue drops them and counts them).
// The Store's writer tries the open again every RetryEvery (30 s), each try
// moving a corrupt file aside at most once, until it succeeds: Err is nil
// from then on, the queue is written and everything works, without a
// restart. Close ends the tries; results still queued then count as lost.
//
// The file is the database plus its -wal beside it: copy it while the
// daemon runs with Backup (VACUUM INTO), or copy the file alone after Close,
// which checkpoints the WAL into it.
//
// All methods of a Store, a disabled one and a nil one included, are safe for
// concurrent use; Err is an atomic load, cheap enough for every join.
// Queries (Top, TopToday, Player, Owner) read through their own connections
// and see what the writer has committed.
package scores
