package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestTablesAreGenerated: the committed tables are what the generator
// writes from the x/sys this module builds with.
func TestTablesAreGenerated(t *testing.T) {
	dir, err := xsysDir()
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range arches {
		want, err := Table(filepath.Join(dir, "unix", "zsysnum_linux_"+arch+".go"), arch)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("..", "zsysnum_"+arch+".go"))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("zsysnum_%s.go is not what the generator writes from %s; run go generate ./internal/sysnum", arch, dir)
		}
	}
}
