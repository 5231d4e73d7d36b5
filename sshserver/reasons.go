package sshserver

import "strconv"

// kind is what a session counts as in the banner and the metrics.
type kind uint8

// Session kinds.
const (
	kindNone      kind = iota // not counted (before the shell, after leaving)
	kindJoining               // on the join screen
	kindPlayer                // driving a snake
	kindSpectator             // watching
	kindBrowsing              // in the scores browser
)

var kindNames = [...]string{kindNone: "none", kindJoining: "joining", kindPlayer: "player", kindSpectator: "spectator", kindBrowsing: "browsing"}

// String is the kind's metric label.
func (k kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// refusal is why a connection, channel, request or join was turned away.
// Its String is the label of snaked_rejections_total.
type refusal uint8

// Refusals.
const (
	refuseHandshakeQueue refusal = iota // the address's handshake queue is full
	refuseFull                          // MaxSessions established
	refusePerIP                         // MaxPerIP established from this address
	refuseShuttingDown                  // the shutdown countdown runs
	refuseChannelType                   // a channel other than "session"
	refuseExtraSession                  // a second session channel
	refuseRequest                       // subsystem, x11, agent, signal, ...
	refuseNoPty                         // a session without a terminal, or exec
	refuseNameTaken                     // the join screen's name is taken
	refuseWorldFull                     // the world has no free snake slot
	refuseNameClaimed                   // the name belongs to another key
	refuseUnavailable                   // the world is not reachable (a gateway's simulation is away)
)

var refusalNames = [...]string{
	refuseHandshakeQueue: "unauth_per_ip",
	refuseFull:           "conn_cap",
	refusePerIP:          "conn_per_ip",
	refuseShuttingDown:   "shutting_down",
	refuseChannelType:    "channel_type",
	refuseExtraSession:   "extra_session",
	refuseRequest:        "request",
	refuseNoPty:          "no_pty",
	refuseNameTaken:      "name_taken",
	refuseWorldFull:      "world_full",
	refuseNameClaimed:    "name_claimed",
	refuseUnavailable:    "world_unavailable",
}

// String is the refusal's metric label.
func (r refusal) String() string {
	if int(r) < len(refusalNames) {
		return refusalNames[r]
	}
	return "refusal(" + strconv.Itoa(int(r)) + ")"
}

// message is what a refused client is told (connection refusals only).
func (r refusal) message() string {
	switch r {
	case refuseFull:
		return "snaked: the server is full; please try again in a minute"
	case refusePerIP:
		return "snaked: too many connections from your address; please try again later"
	case refuseShuttingDown:
		return "snaked: the server is shutting down; please try again in a minute"
	}
	return "snaked: " + r.String()
}

// cause is why a session or a connection ended. Its String is the log's
// reason and the label of snaked_disconnects_total.
type cause uint8

// Causes.
const (
	causeRunning         cause = iota // not ended
	causeQuit                         // q, Ctrl-C, Ctrl-D, Esc on the join screen
	causeShutdown                     // the server shut down
	causeIdle                         // no input for IdleTimeout
	causeWorldFull                    // no free snake slot
	causeNoPty                        // no terminal, or exec
	causeClosed                       // the client closed the session
	causePanic                        // a bug, recovered
	causeNoShell                      // no shell request in time
	causeNoSession                    // no session channel in time
	causeGone                         // the connection closed without a session
	causeStalled                      // a write blocked past StallTimeout
	causeKeepAlive                    // keepalives unanswered
	causeEvicted                      // pushed out by the handshake cap
	causeRefused                      // refused at admission (see the refusal)
	causeAcceptFailed                 // the session channel could not be accepted
	causeRefusedChannels              // too many refused channel opens
	causeCommand                      // a command ran (scores) and said its piece
)

var causeNames = [...]string{
	causeRunning:         "running",
	causeQuit:            "quit",
	causeShutdown:        "shutdown",
	causeIdle:            "idle",
	causeWorldFull:       "world_full",
	causeNoPty:           "no_pty",
	causeClosed:          "client_closed",
	causePanic:           "internal_error",
	causeNoShell:         "no_shell_request",
	causeNoSession:       "no_session_opened",
	causeGone:            "closed_without_session",
	causeStalled:         "writer_stalled",
	causeKeepAlive:       "keepalive_timeout",
	causeEvicted:         "evicted",
	causeRefused:         "refused",
	causeAcceptFailed:    "channel_accept_failed",
	causeRefusedChannels: "too_many_refused_channels",
	causeCommand:         "command",
}

// String is the cause's log and metric label.
func (c cause) String() string {
	if int(c) < len(causeNames) {
		return causeNames[c]
	}
	return "cause(" + strconv.Itoa(int(c)) + ")"
}

// hsFailure is why an SSH handshake did not complete. Its String is the
// label of snaked_handshake_failures_total.
type hsFailure uint8

// Handshake failures.
const (
	hsError        hsFailure = iota // the client or the protocol failed
	hsTimeout                       // HandshakeTimeout passed in the handshake
	hsEvicted                       // pushed out by MaxHandshakes
	hsQueueTimeout                  // waited HandshakeTimeout for a slot
)

var hsFailureNames = [...]string{
	hsError:        "error",
	hsTimeout:      "timeout",
	hsEvicted:      "evicted",
	hsQueueTimeout: "queue_timeout",
}

// String is the failure's metric label.
func (f hsFailure) String() string {
	if int(f) < len(hsFailureNames) {
		return hsFailureNames[f]
	}
	return "hsFailure(" + strconv.Itoa(int(f)) + ")"
}
