package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/show"
)

// TestRunFormats: run --format writes what tailgate show writes of the
// same Result, to stdout (the table then on stderr) and to files.
func TestRunFormats(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	dir := t.TempDir()
	res, csv := filepath.Join(dir, "r.json"), filepath.Join(dir, "p.csv")
	code, stdout, stderr := runInProcess(t, "run", "syscall-read", "--trials", "2", "--duration", "50ms", "--warmup", "0",
		"-o", res, "--format", "benchstat", "--format", "csv="+csv)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := result.Load(res)
	if err != nil {
		t.Fatal(err)
	}
	render := func(f show.Format) string {
		var b bytes.Buffer
		if err := show.New(r).Write(&b, f, show.Options{}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if want := render(show.FormatBenchstat); stdout != want {
		t.Errorf("stdout is not the Result in benchstat format:\n%s\nwant:\n%s", stdout, want)
	}
	if !strings.Contains(stderr, "syscall.read") {
		t.Errorf("the run's table is not on stderr: %s", stderr)
	}
	got, err := os.ReadFile(csv)
	if err != nil {
		t.Fatal(err)
	}
	if want := render(show.FormatCSV); string(got) != want {
		t.Errorf("%s is not the Result in CSV", csv)
	}
}

func TestRunFormatsRefused(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown format", []string{"--format", "yaml"}, "yaml"},
		{"two on stdout", []string{"--format", "csv", "--format", "json"}, "standard output"},
		{"stdout twice", []string{"--format", "csv", "-o", "-"}, "standard output"},
		{"one file twice", []string{"--format", "csv=" + filepath.Join(dir, "x"), "--format", "json=" + filepath.Join(dir, "x")}, "both write"},
		{"missing directory", []string{"--format", "csv=" + filepath.Join(dir, "no", "x.csv")}, "does not exist"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := runInProcess(t, append([]string{"run", "syscall-read"}, c.args...)...)
			if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 2 {
				t.Errorf("exit %d, stderr %q; want exit 2 naming %q", code, stderr, c.want)
			}
		})
	}
}
