package version

import (
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tailgate-ci/tailgate/internal/result"
)

func TestResolve(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, tc := range []struct {
		name            string
		version, commit string
		bi              *debug.BuildInfo
		want            result.Version
	}{
		{name: "no build info", want: result.Version{Version: Dev}},
		{name: "release: ldflags win", version: "v0.3.1", commit: "abc123",
			bi:   &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("fff", "true")},
			want: result.Version{Version: "v0.3.1", Commit: "abc123"}},
		{name: "go install @version", bi: &debug.BuildInfo{Main: debug.Module{Version: "v0.3.1"}},
			want: result.Version{Version: "v0.3.1"}},
		{name: "checkout build", bi: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("0123abcd", "false")},
			want: result.Version{Version: Dev, Commit: "0123abcd"}},
		{name: "dirty checkout", bi: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("0123abcd", "true")},
			want: result.Version{Version: Dev, Commit: "0123abcd-dirty"}},
		{name: "ldflags version, commit from vcs", version: "v1.0.0", bi: &debug.BuildInfo{Settings: vcs("0123abcd", "false")},
			want: result.Version{Version: "v1.0.0", Commit: "0123abcd"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, resolve(tc.version, tc.commit, tc.bi)); diff != "" {
				t.Errorf("resolve (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		v    result.Version
		want string
	}{
		{result.Version{Version: "v0.3.1", Commit: "abc123"}, "tailgate v0.3.1 (commit abc123, go1.26.8, linux/arm64)"},
		{result.Version{Version: Dev}, "tailgate dev (commit unknown, go1.26.8, linux/arm64)"},
	} {
		if got := format(tc.v, "go1.26.8", "linux/arm64"); got != tc.want {
			t.Errorf("format(%+v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
