package scenarios

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// A ufunc tracer's binary is one a variant's dir= moves and a Result
// records, found through its registry entry (Kind.Binaries).
func TestInDirMovesProbedBinaries(t *testing.T) {
	home, other := t.TempDir(), t.TempDir()
	for _, d := range []string{home, other} {
		if err := os.MkdirAll(filepath.Join(d, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "bin", "server"), []byte("#!/bin/sh\n# "+d+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	src := "name: probed\nworkload: {kind: syscall}\ntracers:\n  ufunc: {binary: ./bin/server, symbols: [main]}\n"
	s, err := Parse(filepath.Join(home, "probed.yaml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	binary := func(d string) result.Executable {
		p := filepath.Join(d, "bin", "server")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		return result.Executable{Role: "ufunc", Path: p, SHA256: hex.EncodeToString(sum[:])}
	}
	if diff := cmp.Diff([]result.Executable{binary(home)}, Executables(s)); diff != "" {
		t.Errorf("executables at home (-want +got):\n%s", diff)
	}
	moved, err := InDir(s, other, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]result.Executable{binary(other)}, Executables(moved)); diff != "" {
		t.Errorf("executables of the variant (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]result.Executable{binary(home)}, Executables(s)); diff != "" {
		t.Errorf("InDir changed the scenario it was given (-want +got):\n%s", diff)
	}
}

func TestInDirNothingToMove(t *testing.T) {
	s, err := Parse("plain.yaml", []byte("name: plain\nworkload: {kind: syscall}\ntracers:\n  sched: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = InDir(s, t.TempDir(), nil)
	want := "dir= applies to an exec workload or a ufunc tracer; plain has neither"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}
