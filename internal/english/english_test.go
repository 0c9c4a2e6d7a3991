package english

import "testing"

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 rounds"}, {1, "1 round"}, {2, "2 rounds"}, {-1, "-1 rounds"}} {
		if got := Count(tc.n, "round"); got != tc.want {
			t.Errorf("Count(%d, round) = %q, want %q", tc.n, got, tc.want)
		}
	}
	if got := Plural(1, "trial", "trials"); got != "trial" {
		t.Errorf("Plural(1) = %q", got)
	}
	if got := Plural(3, "analysis", "analyses"); got != "analyses" {
		t.Errorf("Plural(3) = %q", got)
	}
}

func TestOr(t *testing.T) {
	for _, tc := range []struct {
		items []string
		want  string
	}{{nil, ""}, {[]string{"a"}, "a"}, {[]string{"a", "b"}, "a or b"}, {[]string{"a", "b", "c"}, "a, b or c"}} {
		if got := Or(tc.items); got != tc.want {
			t.Errorf("Or(%q) = %q, want %q", tc.items, got, tc.want)
		}
	}
}

func TestAnd(t *testing.T) {
	for _, tc := range []struct {
		items []string
		want  string
	}{{nil, ""}, {[]string{"a"}, "a"}, {[]string{"a", "b"}, "a and b"}, {[]string{"a", "b", "c"}, "a, b and c"}} {
		if got := And(tc.items); got != tc.want {
			t.Errorf("And(%q) = %q, want %q", tc.items, got, tc.want)
		}
	}
}
