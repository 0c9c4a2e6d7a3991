package cmdline

import (
	"context"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

func TestDispatch(t *testing.T) {
	var ran []string
	sub := func(name string) func(context.Context, *flag.FlagSet, []string, io.Writer, io.Writer) error {
		return func(_ context.Context, fs *flag.FlagSet, args []string, _, _ io.Writer) error {
			n := fs.Int("n", 0, "a `N`")
			if _, err := Parse(fs, args); err != nil {
				return err
			}
			ran = append(ran, name+":"+fs.Name()+":"+strings.Repeat("x", *n))
			return nil
		}
	}
	subs := []Sub{
		{Name: "add", Synopsis: "STORE", About: "Adds.", Run: sub("add")},
		{Name: "page", Alias: "html", Synopsis: "STORE -o DIR", About: "Writes a page.", Run: sub("page")},
	}
	run := func(args ...string) (string, error) {
		var out strings.Builder
		err := Subcommands{Command: "history", Subs: subs, About: "\nabout the command\n"}.Dispatch(context.Background(), args, &out, io.Discard)
		return out.String(), err
	}

	if _, err := run("add", "-n", "2"); err != nil {
		t.Fatal(err)
	}
	if _, err := run("html"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"add:tailgate history add:xx", "page:tailgate history page:"}; strings.Join(ran, "|") != strings.Join(want, "|") {
		t.Errorf("ran %q, want %q", ran, want)
	}

	out, err := run("-h")
	if err != nil {
		t.Fatal(err)
	}
	want := "usage: tailgate history add STORE\n       tailgate history page STORE -o DIR\n\nabout the command\n"
	if out != want {
		t.Errorf("-h printed\n%q\nwant\n%q", out, want)
	}
	out, err = run("page", "-h")
	if !errors.Is(err, flag.ErrHelp) || !strings.HasPrefix(out, "usage: tailgate history page STORE -o DIR\n\nWrites a page.\n") || !strings.Contains(out, "-n N") {
		t.Errorf("page -h: %v, printed\n%s", err, out)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "name a subcommand: add, page (tailgate history -h)"},
		{[]string{"ad"}, `unknown subcommand "ad"; did you mean add? (tailgate history -h)`},
		{[]string{"frobnicate"}, `unknown subcommand "frobnicate"; want add, page (tailgate history -h)`},
	} {
		out, err := run(c.args...)
		var ce *Error
		if !errors.As(err, &ce) || err.Error() != c.want || out != "" {
			t.Errorf("%q: error %v (%T), printed %q; want the Error %q and nothing printed", c.args, err, err, out, c.want)
		}
	}
}

func TestCutDashes(t *testing.T) {
	for _, c := range []struct{ args, own, rest []string }{
		{[]string{"a", "--", "--budget", "5m"}, []string{"a"}, []string{"--budget", "5m"}},
		{[]string{"a", "-o", "x"}, []string{"a", "-o", "x"}, nil},
		{[]string{"--", "a", "--", "b"}, []string{}, []string{"a", "--", "b"}},
	} {
		own, rest := CutDashes(c.args)
		if strings.Join(own, " ") != strings.Join(c.own, " ") || len(own) != len(c.own) || strings.Join(rest, " ") != strings.Join(c.rest, " ") || (rest == nil) != (c.rest == nil) {
			t.Errorf("CutDashes(%q) = %q, %q; want %q, %q", c.args, own, rest, c.own, c.rest)
		}
	}
}
