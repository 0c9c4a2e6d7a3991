package main

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tailgate-ci/tailgate/internal/termwidth"
)

// widest is the columns of text's widest line.
func widest(text string) int {
	n := 0
	for _, l := range strings.Split(text, "\n") {
		n = max(n, utf8.RuneCountInString(l))
	}
	return n
}

// baseline show and kernels list keep to $COLUMNS (100 and 80), the
// values a reader needs still there; without COLUMNS, as on a pipe, to
// 100 (the kernels' rows fit 80 columns whole, the baselines' 101).
func TestListWidths(t *testing.T) {
	bl := t.TempDir()
	for _, f := range []string{"trials-syscall-read.json", "trials-pipe-pingpong.json"} {
		if code, _, errOut := runInProcess(t, "baseline", "save", "../../report/testdata/"+f, bl); code != 0 {
			t.Fatalf("baseline save %s: exit %d: %s", f, code, errOut)
		}
	}
	cache := fakeKernelCache(t, "6.1.0-42-cloud-amd64", "6.12.57-cloud-amd64", "6.12.57-rt-amd64")
	for _, tc := range []struct {
		name string
		args []string
		want []string // at every width
		full string   // a header only whole rows have
		fits int      // the fewest COLUMNS the whole rows keep to
	}{
		{"baseline show", []string{"baseline", "show", bl},
			[]string{"syscall-read", "pipe-pingpong", "syscall.read", "sched.runq", "692ns", "89.6µs", "host"}, "| file", 101},
		{"kernels list", []string{"kernels", "list", "--kernel-cache", cache},
			[]string{"debian:6.1.0-42-cloud-amd64", "debian:6.12.57-rt-amd64", "cached in"}, "| modules", 80},
	} {
		for _, columns := range []int{100, 80, 0} {
			t.Run(fmt.Sprintf("%s/%d", tc.name, columns), func(t *testing.T) {
				t.Setenv("COLUMNS", "")
				if columns > 0 {
					t.Setenv("COLUMNS", fmt.Sprint(columns))
				}
				code, out, errOut := runInProcess(t, tc.args...)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errOut)
				}
				t.Logf("COLUMNS=%d: widest line %d columns", columns, widest(out))
				width := columns
				if width == 0 {
					width = termwidth.Piped
				}
				for i, l := range strings.Split(out, "\n") {
					if n := utf8.RuneCountInString(l); n > width {
						t.Errorf("line %d is %d columns, over %d: %q", i+1, n, width, l)
					}
				}
				for _, w := range tc.want {
					if !strings.Contains(out, w) {
						t.Errorf("lacks %q:\n%s", w, out)
					}
				}
				want := width >= tc.fits
				if whole := strings.Contains(out, tc.full); whole != want {
					t.Errorf("has %q: %v, want %v (whole rows from %d columns):\n%s", tc.full, whole, want, tc.fits, out)
				}
			})
		}
	}
}
