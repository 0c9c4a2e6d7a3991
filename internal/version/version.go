// Package version says which tailgate this is: the release and commit
// stamped at link time, else what the Go toolchain recorded in the binary.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// Version and Commit are set at link time for releases (make release):
//
//	-ldflags "-X github.com/tailgate-ci/tailgate/internal/version.Version=v1.2.3
//	          -X github.com/tailgate-ci/tailgate/internal/version.Commit=SHA"
//
// Empty, they come from the build info: the module version of a
// `go install ...@v1.2.3`, the VCS revision of a build in a checkout.
var (
	Version string
	Commit  string
)

// Dev is the version of a build that says nothing about its origin.
const Dev = "dev"

// Get returns the version and the VCS commit the binary was built from.
func Get() result.Version {
	bi, _ := debug.ReadBuildInfo()
	return resolve(Version, Commit, bi)
}

// resolve prefers what the linker was told, then the build info.
func resolve(version, commit string, bi *debug.BuildInfo) result.Version {
	v := result.Version{Version: version, Commit: commit}
	if bi == nil {
		if v.Version == "" {
			v.Version = Dev
		}
		return v
	}
	if v.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v.Version = bi.Main.Version
	}
	if v.Version == "" {
		v.Version = Dev
	}
	if v.Commit == "" {
		modified := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if modified && v.Commit != "" {
			v.Commit += "-dirty"
		}
	}
	return v
}

// String is the line `tailgate --version` prints.
func String() string {
	return format(Get(), runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH)
}

func format(v result.Version, goVersion, platform string) string {
	commit := v.Commit
	if commit == "" {
		commit = "unknown"
	}
	return fmt.Sprintf("tailgate %s (commit %s, %s, %s)", v.Version, commit, goVersion, platform)
}
