// Package scores owns the scores database: one SQLite file (through the
// pure-Go driver modernc.org/sqlite) holding each identity's lifetime record,
// its best length per UTC day, and the name claims of players with keys.
package scores
