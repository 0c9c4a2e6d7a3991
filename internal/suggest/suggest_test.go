package suggest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNear(t *testing.T) {
	names := []string{"vfs_read", "vfs_readv", "vfs_write", "kernel_clone", "__x64_sys_clone", "__do_sys_clone3", "do_sys_open", "ksys_read", "vfs_read"}
	for _, tc := range []struct {
		name, in string
		n        int
		want     []string
	}{
		{name: "typo", in: "vfs_raed", n: 3, want: []string{"vfs_read", "vfs_readv"}},
		{name: "case", in: "VFS_READ", n: 1, want: []string{"vfs_read"}},
		{name: "contained", in: "clone", n: 5, want: []string{"kernel_clone", "__do_sys_clone3", "__x64_sys_clone"}},
		{name: "nothing near", in: "schedule_timeout", n: 5, want: []string{}},
		{name: "limit", in: "vfs_read", n: 1, want: []string{"vfs_read"}},
		{name: "none asked", in: "vfs_read", n: 0, want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Near(tc.in, names, tc.n)); diff != "" {
				t.Errorf("Near(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b  string
		limit int
		want  int
	}{
		{"kitten", "sitting", 5, 3},
		{"", "abc", 5, 3},
		{"abc", "abc", 0, 0},
		{"abcdef", "uvwxyz", 2, 3}, // cut short past the limit
		{"vfs_raed", "vfs_read", 2, 1},
		{"ab", "ba", 2, 1},
	} {
		if got := distance(tc.a, tc.b, tc.limit); got != tc.want {
			t.Errorf("distance(%q, %q, %d) = %d, want %d", tc.a, tc.b, tc.limit, got, tc.want)
		}
	}
}
