// Package version says which tailgate this is.
package version

import (
	"runtime/debug"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// Version is set at link time for releases
// (-ldflags "-X github.com/tailgate-ci/tailgate/internal/version.Version=v1.2.3").
var Version = "dev"

// Get returns the version and the VCS commit the binary was built from.
func Get() result.Version {
	v := result.Version{Version: Version}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = s.Value
			case "vcs.modified":
				if s.Value == "true" && v.Commit != "" {
					v.Commit += "-dirty"
				}
			}
		}
	}
	return v
}
