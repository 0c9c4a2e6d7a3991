package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/engine/runner"
	"github.com/tailgate-ci/tailgate/internal/progress"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/slowdown"
	"github.com/tailgate-ci/tailgate/internal/sysctl"
	"github.com/tailgate-ci/tailgate/report/render"
)

// BenchmarkGateRuns runs real gates on this machine, many times over, and
// counts their exit codes: the false-alarm rate of A/A gates, and how often
// a real slowdown is caught. It takes long (each gate runs its rounds of
// worker processes), so it is a benchmark, not a test:
//
//	go test ./cmd/tailgate/ -run '^$' -bench GateRuns -benchtime 1x -timeout 0
//
// Settings, from the environment:
//
//	TAILGATE_BENCH_SCENARIOS  scenarios (default: syscall-read pipe-pingpong timer-1ms)
//	TAILGATE_BENCH_RUNS       gate runs per scenario (default 30)
//	TAILGATE_BENCH_MODE       pair: two identical host variants in one job (default);
//	                          stored: against a baseline from a separate earlier run
//	TAILGATE_BENCH_SLOW       pair mode: work instructions attached to the traced
//	                          tracepoints during the head's rounds (0: none, A/A);
//	                          stored mode: only the TSV's label of a slowdown held
//	                          around the benchmark (tools/slowdown)
//	TAILGATE_BENCH_SLOW_BASE  pair mode: the same during the base's rounds (default 0).
//	                          Any program costs its dispatch on every event: with
//	                          base 1 and head 1+N, the head's extra cost is N
//	                          instructions alone, a shift as small as wanted
//	TAILGATE_BENCH_BASE_VARIANT, TAILGATE_BENCH_HEAD_VARIANT
//	                          pair mode: the two --variant specs (default base
//	                          and head), e.g. base:dir=BUILD-A head:dir=BUILD-B
//	TAILGATE_BENCH_LABEL      the TSV lines' third column (default the
//	                          slowdowns, SLOW_BASE/SLOW)
//	TAILGATE_BENCH_CONDITION  a label for the TSV lines (quiet, neighbour)
//	TAILGATE_BENCH_BASELINE   stored mode: a baseline made earlier (tailgate run, then
//	                          calibrate) instead of one made here, so that a slowdown
//	                          held around the benchmark (tools/slowdown) is the
//	                          candidate's alone
//	TAILGATE_BENCH_CALIBRATE  stored mode: 0 skips the calibration of the baseline
//	TAILGATE_BENCH_CALIBRATE_RUNS  stored mode: the calibration's runs (default 3)
//	TAILGATE_BENCH_ARGS       more gate arguments, space separated
//	TAILGATE_BENCH_OUT        append one line per gate run to this file (TSV)
func BenchmarkGateRuns(b *testing.B) {
	scens := strings.Fields(envOr("TAILGATE_BENCH_SCENARIOS", "syscall-read pipe-pingpong timer-1ms"))
	runs, _ := strconv.Atoi(envOr("TAILGATE_BENCH_RUNS", "30"))
	mode := envOr("TAILGATE_BENCH_MODE", "pair")
	slow, _ := strconv.Atoi(envOr("TAILGATE_BENCH_SLOW", "0"))
	slowBase, _ := strconv.Atoi(envOr("TAILGATE_BENCH_SLOW_BASE", "0"))
	condition := envOr("TAILGATE_BENCH_CONDITION", "-")
	baseVariant := envOr("TAILGATE_BENCH_BASE_VARIANT", "base")
	headVariant := envOr("TAILGATE_BENCH_HEAD_VARIANT", "head")
	label := envOr("TAILGATE_BENCH_LABEL", fmt.Sprintf("%d/%d", slowBase, slow))
	extra := strings.Fields(os.Getenv("TAILGATE_BENCH_ARGS"))
	var out io.Writer = io.Discard
	if path := os.Getenv("TAILGATE_BENCH_OUT"); path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		out = f
	}
	ctx := context.Background()
	// The slowdowns are attached once, before any trial's tracers, and
	// switched on for their side's time: its whole trials, or its slices
	// of an interleaved round.
	hv, err := engine.ParseVariant(headVariant)
	if err != nil {
		b.Fatal(err)
	}
	sw := switched{headName: hv.Name}
	for _, side := range []struct {
		insns int
		s     **slowdown.Slowdown
	}{{slowBase, &sw.base}, {slow, &sw.head}} {
		if side.insns > 0 {
			sd, err := slowdown.AttachSwitched(side.insns)
			if err != nil {
				b.Fatal(err)
			}
			defer sd.Close()
			*side.s = sd
		}
	}
	for range b.N {
		for _, sc := range scens {
			var codes []int
			var secs []float64
			var rounds []int
			base := ""
			if mode == "stored" && os.Getenv("TAILGATE_BENCH_BASELINE") != "" {
				base = os.Getenv("TAILGATE_BENCH_BASELINE")
			} else if mode == "stored" {
				base = filepath.Join(b.TempDir(), sc+".json")
				if err := storedBaseline(ctx, sc, base, extra); err != nil {
					b.Fatal(err)
				}
			}
			for i := range runs {
				var args []string
				env := roundsEnv{sysctlRoot: sysctl.Root}
				switch mode {
				case "pair":
					args = append([]string{sc, "--variant", baseVariant, "--variant", headVariant}, extra...)
					if slow > 0 || slowBase > 0 {
						env.wrap = sw.wrap
					}
				case "stored":
					args = append([]string{sc, "--baseline", base}, extra...)
				default:
					b.Fatalf("TAILGATE_BENCH_MODE %q: want pair or stored", mode)
				}
				js := filepath.Join(b.TempDir(), "report.json")
				args = append(args, "--format", "json="+js)
				var stderr bytes.Buffer
				start := time.Now()
				err := runGate(ctx, args, io.Discard, &stderr, env)
				d := time.Since(start).Seconds()
				code := exitCode(err)
				if code >= exitUsage {
					b.Fatalf("%s run %d: exit %d: %v\n%s", sc, i+1, code, err, stderr.String())
				}
				r := stoppedAfter(stderr.String())
				codes, secs, rounds = append(codes, code), append(secs, d), append(rounds, r)
				name, ratios := gatedRatios(js)
				if name == "" {
					name = sc
				}
				fmt.Fprintf(out, "%s\t%s\t%s\t%d\t%d\t%d\t%.1f\t%s\t%s\t%s\n", time.Now().UTC().Format(time.RFC3339), name, label, i+1, code, r, d, mode, condition, ratios)
			}
			fails := 0
			for _, c := range codes {
				if c == exitRegression {
					fails++
				}
			}
			b.Logf("%s mode=%s slow=%d: %d of %d gate runs exit 1; median %.1f s, median %d rounds", sc, mode, slow, fails, len(codes), median(secs), int(median(intsToFloats(rounds))))
		}
	}
}

// switched is a host target whose trials, whole or in slices, run with
// its side's slowdown switched on (nil: none).
type switched struct {
	engine.Target
	headName   string
	base, head *slowdown.Slowdown
}

func (s switched) wrap(t engine.Target) engine.Target {
	c := s
	c.Target = t
	return c
}

func (s switched) side(req runner.Request) *slowdown.Slowdown {
	if req.Target.Name == s.headName {
		return s.head
	}
	return s.base
}

func (s switched) Run(ctx context.Context, req runner.Request, p *progress.Reporter) (*result.Result, error) {
	if sd := s.side(req); sd != nil {
		if err := sd.Set(true); err != nil {
			return nil, err
		}
		defer sd.Set(false)
	}
	return s.Target.Run(ctx, req, p)
}

func (s switched) Interleave(req runner.Request) (runner.Request, func(*result.Result), string) {
	it, ok := s.Target.(engine.Interleaver)
	if !ok {
		return req, nil, "target " + s.Name() + " runs its trials whole"
	}
	run, stamp, why := it.Interleave(req)
	if sd := s.side(req); sd != nil && why == "" {
		run.SliceHook = runner.JoinHooks(run.SliceHook, sd.Set)
	}
	return run, stamp, why
}

// storedBaseline runs sc once and stores it at path: the baseline a later
// gate run compares with, from a separate earlier process tree; then
// calibrates it (three more separate runs), as the README tells users to.
func storedBaseline(ctx context.Context, sc, path string, extra []string) error {
	var stderr bytes.Buffer
	args := append([]string{"run", sc, "-o", path}, extra...)
	if code := run(ctx, args, io.Discard, &stderr); code != 0 {
		return fmt.Errorf("baseline run: exit %d: %s", code, stderr.String())
	}
	if os.Getenv("TAILGATE_BENCH_CALIBRATE") == "0" {
		return nil
	}
	stderr.Reset()
	args = append([]string{"calibrate", sc, "--baseline", path, "--runs", envOr("TAILGATE_BENCH_CALIBRATE_RUNS", "3")}, extra...)
	if code := run(ctx, args, io.Discard, &stderr); code != 0 {
		return fmt.Errorf("calibrate: exit %d: %s", code, stderr.String())
	}
	return nil
}

// gatedRatios reads a JSON report: its scenarios' names, and its gated
// verdicts' metric, percentile, ratio, interval and verdict ("-" for
// none).
func gatedRatios(path string) (names, ratios string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", "-"
	}
	var doc render.JSONReport
	if json.Unmarshal(b, &doc) != nil {
		return "", "-"
	}
	var ns, out []string
	for _, s := range doc.Scenarios {
		ns = append(ns, s.Name)
		for _, v := range s.Verdicts {
			if v.Gated && v.Ratio != nil {
				out = append(out, fmt.Sprintf("%s:%s=%.3f[%s,%s]:%s", v.Metric, v.Percentile, *v.Ratio, fmtPtr(v.Lo), fmtPtr(v.Hi), v.Verdict))
			}
		}
	}
	if len(out) == 0 {
		return strings.Join(ns, "+"), "-"
	}
	return strings.Join(ns, "+"), strings.Join(out, ",")
}

// fmtPtr is a ratio's bound to three places, "-" when there is none.
func fmtPtr(f *float64) string {
	if f == nil {
		return "-"
	}
	return strconv.FormatFloat(*f, 'f', 3, 64)
}

var stoppedRe = regexp.MustCompile(`stopped after (\d+) rounds`)

func stoppedAfter(s string) int {
	m := stoppedRe.FindStringSubmatch(s)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func intsToFloats(xs []int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}
