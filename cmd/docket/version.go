package main

import "runtime/debug"

// version is set at build time with -ldflags "-X main.version=…" (the
// Makefile passes `git describe`); a plain `go build` falls back to the VCS
// revision the Go toolchain records in the binary.
var version = ""

// buildVersion is the version the binary reports.
func buildVersion() string {
	if version != "" {
		return version
	}
	return vcsVersion(debug.ReadBuildInfo())
}

// vcsVersion names the commit a binary was built from, "-dirty" when the
// work tree had changes, or "dev" when the toolchain recorded none.
func vcsVersion(info *debug.BuildInfo, ok bool) string {
	if !ok {
		return "dev"
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified == "true" {
		rev += "-dirty"
	}
	return rev
}
