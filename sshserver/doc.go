// Package sshserver is snaked's SSH side: it accepts connections within
// their bounds, lets everyone in (a key, when one is offered, is the
// player's identity) and runs each session's life (the join screen, play,
// spectating, the scores browser, the goodbye): its keys, its frames of
// the world a game.Host shows and its writes. It owns every goroutine that
// touches the network (see Server); the world's clock, the cluster's link
// and the screens outside play belong to other packages, which tell the
// server of new views (Server.Ticked, Wake) and of the cluster (Cluster).
package sshserver
