package main

import (
	"runtime/debug"
	"testing"
)

func TestVCSVersion(t *testing.T) {
	rev := "0f4026b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7"
	for _, tc := range []struct {
		name     string
		settings []debug.BuildSetting
		ok       bool
		want     string
	}{
		{"no build info", nil, false, "dev"},
		{"no vcs stamp", []debug.BuildSetting{{Key: "GOOS", Value: "linux"}}, true, "dev"},
		{"clean", []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}}, true, "0f4026b1c2d3"},
		{"dirty", []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}}, true, "0f4026b1c2d3-dirty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := vcsVersion(&debug.BuildInfo{Settings: tc.settings}, tc.ok); got != tc.want {
				t.Fatalf("vcsVersion = %q, want %q", got, tc.want)
			}
		})
	}
}
