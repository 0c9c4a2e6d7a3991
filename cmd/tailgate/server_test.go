package main

import (
	"bytes"
	"debug/elf"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/testenv"
)

// buildServers builds testdata/server's servers and their loads into dir
// with scripts/build-servers.sh, as the base or the head.
func buildServers(t *testing.T, dir, build string) {
	t.Helper()
	testenv.Need(t, testenv.Tool("cc", "Debian: gcc"))
	cmd := exec.Command("scripts/build-servers.sh", dir, build)
	cmd.Dir = "../.."
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build-servers.sh %s: %v\n%s", build, err, b)
	}
}

// The recipe's servers, C and Go, run as their scenarios run them (no
// tracers named): each request the client sends is counted once at the
// server and once in the client's log, and the head's handler, which
// spends 40 µs in user space on every 40th request, puts both views' p99
// at 40 µs or more in every trial, as 2.5% of its requests take that long
// whatever the machine does. A request's round trip holds its server's
// read to write, so the client's quantiles are at least the server's: a
// client log read in the wrong unit, or one request's time given to
// another, fails that. The gates' verdicts on real runs are in
// BENCHMARKS.md ("A server's requests").
func TestServerRecipes(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	dir := t.TempDir()
	buildServers(t, dir, "head")
	for _, name := range []string{"tcp", "http"} {
		t.Run(name, func(t *testing.T) {
			yaml, err := os.ReadFile("../../testdata/server/" + name + ".yaml")
			if err != nil {
				t.Fatal(err)
			}
			// Another port than the recipe's, fewer requests, and time
			// enough for the client to send them all.
			port := strconv.Itoa(20000 + rand.IntN(20000))
			for _, p := range []string{"7081", "7082"} {
				yaml = bytes.ReplaceAll(yaml, []byte(p), []byte(port))
			}
			yaml = bytes.ReplaceAll(yaml, []byte("-n, 20000"), []byte("-n, 2000"))
			yaml = bytes.ReplaceAll(yaml, []byte("duration: 1s"), []byte("duration: 60s"))
			sc := filepath.Join(dir, name+".yaml")
			if err := os.WriteFile(sc, yaml, 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, name+".json")
			code, _, stderr := runInProcess(t, "run", sc, "--trials", "2", "-o", out)
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, stderr)
			}
			s := loadResult(t, out).Find(name + "-server")
			if s == nil {
				t.Fatalf("no %s-server in the result", name)
			}
			m, c := s.Metrics["request.server"], s.Metrics["request.client"]
			if m == nil || len(m.Trials) != 2 {
				t.Fatalf("want request.server measured in 2 trials, got %+v", m)
			}
			if c == nil || len(c.Trials) != 2 {
				t.Fatalf("want request.client read from the client's log in 2 trials, got %+v", c)
			}
			const requests = 2000
			for i, tr := range m.Trials {
				if tr.Ops != requests {
					t.Errorf("trial %d: %d ops, want the client's %d", i+1, tr.Ops, requests)
				}
				// A request the warmup's client sent as it was stopped
				// may be answered in the trial.
				if n := tr.Summary.Count; n < requests || n > requests+1 {
					t.Errorf("trial %d: %d requests counted, the client sent %d", i+1, n, requests)
				}
				if p99 := tr.Summary.P99; p99 < 40e3 {
					t.Errorf("trial %d: p99 %.1f µs, below the 40 µs the head spends on 2.5%% of its requests", i+1, p99/1e3)
				}
				ct := c.Trials[i].Summary
				if ct.Count != requests {
					t.Errorf("trial %d: the client's log holds %d requests, it sent %d", i+1, ct.Count, requests)
				}
				// One histogram bucket (under 1%) of slack.
				for _, q := range []struct {
					name           string
					client, server float64
				}{{"p50", ct.P50, tr.Summary.P50}, {"p99", ct.P99, tr.Summary.P99}} {
					if q.client < 0.99*q.server {
						t.Errorf("trial %d: the client's %s %.1f µs is below the server's %.1f µs, which its round trips hold", i+1, q.name, q.client/1e3, q.server/1e3)
					}
				}
			}
		})
	}
}

// The layout build is the base laid out otherwise: each server's request
// loop (the C server's serve, the Go server's main.handle) at another
// address, and the same size, so that an A/A of base against layout
// differs in layout alone (BENCHMARKS.md, "Another build of the same code").
func TestLayoutBuildMovesTheCode(t *testing.T) {
	dir := t.TempDir()
	base, layout := filepath.Join(dir, "base"), filepath.Join(dir, "layout")
	buildServers(t, base, "base")
	buildServers(t, layout, "layout")
	for bin, fn := range map[string]string{"tcp-server": "serve", "http-server": "main.handle"} {
		b, l := symbolOf(t, filepath.Join(base, bin), fn), symbolOf(t, filepath.Join(layout, bin), fn)
		if b.Value == l.Value || b.Size != l.Size {
			t.Errorf("%s: %s at %#x, %d bytes in the base, at %#x, %d bytes in the layout build: want it moved, the same size", bin, fn, b.Value, b.Size, l.Value, l.Size)
		}
	}
}

// symbolOf returns the ELF symbol name of the program at path.
func symbolOf(t *testing.T, path, name string) elf.Symbol {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			return s
		}
	}
	t.Fatalf("%s: no function %s", path, name)
	return elf.Symbol{}
}
