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
// The game never waits on the database: Record puts a finished game on a
// bounded queue and returns at once (a full queue drops the result and counts
// it); one writer goroutine, owned by the Store and stopped by Close, commits
// the queue in one transaction about once a second (Options.FlushEvery). The
// database runs in WAL mode, so a kill -9 loses at most the games queued
// since the last commit.
//
// Open migrates the schema (PRAGMA user_version, one transaction per
// migration), moves a corrupt file aside to <name>.corrupt-<timestamp> and
// starts a fresh one, and, when the file cannot be written, returns a
// disabled Store with the error: its methods do nothing and count what they
// dropped, so the game runs on without scores.
//
// The file is the database plus its -wal beside it: copy it while the
// daemon runs with Backup (VACUUM INTO), or copy the file alone after Close,
// which checkpoints the WAL into it.
//
// All methods of a Store, a disabled one and a nil one included, are safe for
// concurrent use. Queries (Top, TopToday, Player, Owner) read through their
// own connections and see what the writer has committed.
package scores
