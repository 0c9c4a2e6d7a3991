package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
)

// handlerFrames are the functions of tcp.c's head handler and what it
// calls: handle (spin inlined into it, or not), and the clock it reads,
// the C library's clock_gettime and the vDSO's.
var handlerFrames = regexp.MustCompile(`^(handle(\..*)?|spin(\..*)?|clock_gettime|__vdso_clock_gettime)$`)

// The evidence names what grew: a gate of testdata/server's C server,
// base against the head whose handler spins 40 µs on every 40th request,
// samples the stacks of each side's requests above p99, and the frame
// whose share grew most is the handler or a callee of it, named; the
// --pprof files parse and hold both sides' samples. How often the top
// frame is right over repeated gates is in BENCHMARKS.md ("What grew").
func TestGateNamesTheGrownHandler(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	dir := t.TempDir()
	base, head := filepath.Join(dir, "base"), filepath.Join(dir, "head")
	buildServers(t, base, "base")
	buildServers(t, head, "head")
	yaml, err := os.ReadFile("../../testdata/server/tcp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(20000 + rand.IntN(20000))
	yaml = bytes.ReplaceAll(yaml, []byte("7081"), []byte(port))
	sc := filepath.Join(dir, "tcp.yaml")
	if err := os.WriteFile(sc, yaml, 0o644); err != nil {
		t.Fatal(err)
	}
	pp := filepath.Join(dir, "pprof")
	code, stdout, stderr := runInProcess(t, "gate", sc, "--variant", "base:dir="+base, "--variant", "head:dir="+head,
		"--pprof", pp, "-o", filepath.Join(dir, "r.json"))
	if code != 0 && code != 1 {
		t.Fatalf("exit %d:\n%s\n%s", code, stdout, stderr)
	}
	results := map[string]*result.Result{}
	for _, m := range regexp.MustCompile(`result of (\S+) written to (\S+)`).FindAllStringSubmatch(stderr, -1) {
		results[m[1]] = loadResult(t, m[2])
	}
	if results["base"] == nil || results["head"] == nil {
		t.Fatalf("no result of each side in:\n%s", stderr)
	}
	g := report.GrownFrames(results["base"], results["head"], "tcp-server", "request.server", report.GrownRows)
	if g.BaseSamples == 0 || g.CandSamples == 0 || len(g.Frames) == 0 {
		t.Fatalf("grown frames %+v: want samples on both sides and a frame that grew", g)
	}
	if top := g.Frames[0]; !handlerFrames.MatchString(top.Function) {
		t.Errorf("top grown frame %s (%.0f%% → %.0f%%), want the handler or a callee of it; all: %+v", top.Function, 100*top.Base, 100*top.Cand, g.Frames)
	}
	if !strings.Contains(stdout, "what grew in the requests above p99 of request.server") {
		t.Errorf("the report names no grown frames:\n%s", stdout)
	}
	for side, n := range map[string]int{"base": g.BaseSamples, "head": g.CandSamples} {
		f, err := os.Open(filepath.Join(pp, "tcp-server.request.server", side+".pb.gz"))
		if err != nil {
			t.Fatal(err)
		}
		p, err := profile.Parse(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s.pb.gz: %v", side, err)
		}
		var got int64
		for _, s := range p.Sample {
			got += s.Value[0]
		}
		if got != int64(n) {
			t.Errorf("%s.pb.gz holds %d samples, the Result %d", side, got, n)
		}
	}
}
