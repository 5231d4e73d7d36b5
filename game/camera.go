package game

// Camera is what one viewer of the world looks at: the snake it follows
// (a player's own, or the one a spectator follows; its camera keeps that
// snake's head on screen), or every snake on the leaderboard (a
// spectator following it, who may be shown any of them), or else a free
// camera's centre; and the size of the viewer's terminal. A gateway's
// sessions report theirs (sshserver.Server.Cameras) to the follower of
// regions (cluster.RegionFollower), which follows what they cover.
type Camera struct {
	Follow     ID    // the snake followed; 0 = none
	Top        bool  // a spectator following the leaderboard
	At         Point // the free camera's centre (Follow 0, Top false)
	Cols, Rows int   // the terminal's size in cells
}
