package main

import (
	"runtime/debug"
	"strings"
)

// revision and modified are the commit the binary was built from and
// "true" when its tree had changes, as the Makefile's build links them in
// (-ldflags -X) from git. The build information's VCS stamp wins when it
// has one: Go stamps a build in a git clone, but not one in a git
// worktree, under -buildvcs=false or from a tree without .git (an image's
// build context).
var revision, modified string

// version is the daemon's version: the main module's version, then the
// VCS revision it was built from ("modified" when the tree had changes),
// from the build information (debug.ReadBuildInfo).
func version() string {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(bi, revision, modified)
}

// versionOf is version for build information bi (nil when there is none)
// and the linked-in revision and modified.
func versionOf(bi *debug.BuildInfo, rev, mod string) string {
	v := "(unknown)"
	if bi != nil {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		var r, m string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				r = s.Value
			case "vcs.modified":
				m = s.Value
			}
		}
		if r != "" {
			rev, mod = r, m
		}
	}
	if rev == "" {
		return v + ", revision unknown"
	}
	v += ", revision " + strings.TrimSpace(rev)
	if strings.TrimSpace(mod) == "true" {
		v += " (modified)"
	}
	return v
}
