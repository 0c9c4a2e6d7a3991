package history_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/internal/history"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/changepoint"
	"github.com/tailgate-ci/tailgate/report/render"
)

// The speed and memory limits: a history of 1,000 commits × 10
// gated metrics, changes in 5 s, the page in 10 s, 256 MiB.
const (
	scaleCommits   = 1000
	scaleMetrics   = 10
	scaleTrials    = 20 // scenarios.DefaultTrials: what a CI run records
	limitChanges   = 5 * time.Second
	limitPage      = 10 * time.Second
	limitRSSKiB    = 256 << 10
	scaleChildEnv  = "TAILGATE_SCALE_CHILD" // "changes SPEC" or "page SPEC DIR"
	scaleCommitEnv = "TAILGATE_SCALE_COMMITS"
)

// scaleRecords makes n records of real shape: each a Result of five
// syscall-read and five pipe-pingpong scenarios (one gated metric each, ten
// in all), scaleTrials trials per metric drawn from the 80 recorded real
// trials of each, with their full histograms.
func scaleRecords(t testing.TB, n int) []*history.Record {
	t.Helper()
	var real []*result.Result
	for _, name := range []string{"trials-syscall-read.json", "trials-pipe-pingpong.json"} {
		r, err := result.Load(filepath.Join("..", "..", "report", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		real = append(real, r)
	}
	rng := rand.New(rand.NewPCG(20, 1000))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	recs := make([]*history.Record, n)
	for i := range recs {
		r := *real[0]
		r.Scenarios = nil
		for k := range scaleMetrics {
			sc := real[k%2].Scenarios[0]
			sc.Name = fmt.Sprintf("%s-%d", sc.Name, k/2)
			ms := map[string]*result.Metric{}
			for name, m := range sc.Metrics {
				cut := *m
				cut.Trials = make([]result.Trial, scaleTrials)
				for j := range cut.Trials {
					cut.Trials[j] = m.Trials[rng.IntN(len(m.Trials))]
				}
				ms[name] = &cut
			}
			sc.Metrics, sc.Trials = ms, scaleTrials
			r.Scenarios = append(r.Scenarios, sc)
		}
		at := start.Add(time.Duration(i) * time.Hour)
		rec, err := history.NewRecord(&r, fmt.Sprintf("%040x", 0x5ca1e000+i), at, "main", history.Provenance{Tailgate: r.Tailgate})
		if err != nil {
			t.Fatal(err)
		}
		rec.Added = at.Add(time.Minute)
		recs[i] = rec
	}
	return recs
}

// TestScale builds a history of 100 commits, or TAILGATE_SCALE_COMMITS
// (1000, the size, takes two minutes to write), in a directory
// store and a git store, with time limits scaled to it, and
// runs changes and the page on each in a fresh process of this test
// binary, which reports its time and peak RSS (VmHWM).
func TestScale(t *testing.T) {
	if os.Getenv(scaleChildEnv) != "" {
		scaleChild(t)
		return
	}
	n := 100
	if s := os.Getenv(scaleCommitEnv); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 10 {
			t.Fatalf("%s=%q: want a count of at least 10", scaleCommitEnv, s)
		}
	}
	ctx := context.Background()
	recs := scaleRecords(t, n)
	dir := t.TempDir()
	bare := filepath.Join(dir, "repo.git")
	if out, err := exec.Command("git", "init", "--quiet", "--bare", bare).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	specs := []struct{ kind, spec string }{{"dir", filepath.Join(dir, "store")}, {"git", "git:" + bare + "#history"}}
	for _, sp := range specs {
		s, err := history.Open(sp.spec)
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		if err := history.AddAll(ctx, s, recs); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s store: %d commits written in %.1fs", sp.kind, n, time.Since(t0).Seconds())
	}
	recs = nil
	var size int64
	filepath.Walk(filepath.Join(dir, "store"), func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			size += fi.Size()
		}
		return nil
	})
	t.Logf("%d commits × %d metrics × %d trials: %.0f MB of records", n, scaleMetrics, scaleTrials, float64(size)/1e6)
	scale := float64(n) / scaleCommits
	for _, sp := range specs {
		for _, what := range []string{"changes", "page"} {
			t.Run(sp.kind+"/"+what, func(t *testing.T) {
				args := what + " " + sp.spec
				limit := limitChanges
				if what == "page" {
					args += " " + filepath.Join(dir, "site-"+sp.kind)
					limit = limitPage
				}
				cmd := exec.Command(os.Args[0], "-test.run=^TestScale$", "-test.count=1")
				cmd.Env = append(os.Environ(), scaleChildEnv+"="+args)
				cmd.Stderr = os.Stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("child: %v: %s", err, out)
				}
				var m scaleMeasure
				if err := json.Unmarshal(lastLine(out), &m); err != nil {
					t.Fatalf("child said %q: %v", out, err)
				}
				t.Logf("%s %s: %.2fs, peak RSS %d MiB, %d series, %d change points", sp.kind, what, m.Seconds, m.HWMKiB>>10, m.Series, m.Changes)
				if d := time.Duration(m.Seconds * float64(time.Second)); d > time.Duration(float64(limit)*scale) {
					t.Errorf("%s %s of %d commits took %v, the limit is %v", sp.kind, what, n, d, time.Duration(float64(limit)*scale))
				}
				if m.HWMKiB > limitRSSKiB {
					t.Errorf("%s %s: peak RSS %d MiB, the limit is 256 MiB", sp.kind, what, m.HWMKiB>>10)
				}
				if m.Series != scaleMetrics {
					t.Errorf("%d series, want %d", m.Series, scaleMetrics)
				}
			})
		}
	}
}

type scaleMeasure struct {
	Seconds float64 `json:"seconds"`
	HWMKiB  int64   `json:"hwm_kib"`
	Series  int     `json:"series"`
	Changes int     `json:"changes"`
}

// lastLine is the child's JSON line (the test binary prints PASS after).
func lastLine(b []byte) []byte {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "{") {
			return []byte(lines[i])
		}
	}
	return nil
}

// scaleChild does what tailgate history changes (or page) does, timed,
// and prints the measure as a JSON line.
func scaleChild(t *testing.T) {
	f := strings.Fields(os.Getenv(scaleChildEnv))
	t0 := time.Now()
	s, err := history.Open(f[1])
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	series, err := report.ReadSeries(v, report.Selection{})
	v.Close()
	if err != nil {
		t.Fatal(err)
	}
	rep := changepoint.Detect(series, changepoint.Options{})
	switch f[0] {
	case "changes":
		err = render.WriteChanges(bufio.NewWriter(new(strings.Builder)), rep, "text")
	case "page":
		_, err = render.WriteChangesPageDir(f[2], rep, render.ChangesPageOptions{CommitURL: "https://github.com/tailgate-ci/tailgate/commit/%s"})
	}
	if err != nil {
		t.Fatal(err)
	}
	m := scaleMeasure{Seconds: time.Since(t0).Seconds(), HWMKiB: vmHWM(t), Series: len(rep.Series), Changes: len(rep.Changes)}
	b, _ := json.Marshal(m)
	fmt.Printf("\n%s\n", b)
}

// vmHWM is this process's peak resident set, KiB.
func vmHWM(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
	return 0
}
