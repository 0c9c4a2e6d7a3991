package scenarios

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailgate-ci/tailgate/bpf/sched"
	"github.com/tailgate-ci/tailgate/bpf/syscalls"
	"github.com/tailgate-ci/tailgate/internal/result"
)

func TestBuiltinParse(t *testing.T) {
	ss := Builtin()
	var names []string
	for _, s := range ss {
		names = append(names, s.Name)
	}
	want := []string{"fork-exit", "fsync", "fsync-scratch", "kfunc-clone", "kfunc-vfs-read", "pipe-pingpong", "runq-under-noise", "syscall-read", "syscall-write", "tcp-rr", "tcp-rr-small", "timer-1ms"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Fatalf("built-in names (-want +got):\n%s", diff)
	}
	var total time.Duration
	for _, s := range ss {
		t.Run(s.Name, func(t *testing.T) {
			if s.Source != "builtin:"+s.Name+".yaml" {
				t.Errorf("Source = %q; the file name must be the scenario name", s.Source)
			}
			if s.Description == "" {
				t.Error("no description")
			}
			if len(Metrics(s)) == 0 {
				t.Error("no metrics")
			}
			if _, err := Lookup(s.Name); err != nil {
				t.Errorf("Lookup: %v", err)
			}
			if _, err := Lookup(s.Source); err != nil {
				t.Errorf("Lookup(%q): %v", s.Source, err)
			}
			w := s.Workload
			if err := w.check(); err != nil {
				t.Errorf("workload check: %v", err)
			}
		})
		total += s.Warmup + time.Duration(s.Trials)*s.Duration
	}
	if total > 2*time.Minute {
		t.Errorf("all built-ins take %v with defaults; keep it within 2m", total)
	}
}

func TestParseDefaults(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want Scenario
	}{
		{
			name: "syscall",
			yaml: "name: s\nworkload:\n  kind: syscall\ntracers:\n  syscall: {}\n",
			want: Scenario{
				Name:     "s",
				Workload: Workload{Kind: "syscall", Threads: 1, Params: &Syscall{Name: "read", Size: 4096}},
				Tracers:  Tracers{"syscall": &syscalls.Config{Syscalls: []string{"read"}}},
				Trials:   DefaultTrials, Warmup: DefaultWarmup, Duration: DefaultDuration, Evidence: DefaultEvidence,
				Source: "t.yaml",
			},
		},
		{
			name: "getppid has no size",
			yaml: "name: s\nworkload: {kind: syscall, syscall: getppid, rate: 1000}\ntracers: {syscall: }\n",
			want: Scenario{
				Name:     "s",
				Workload: Workload{Kind: "syscall", Threads: 1, Params: &Syscall{Name: "getppid", Rate: 1000}},
				Tracers:  Tracers{"syscall": &syscalls.Config{Syscalls: []string{"getppid"}}},
				Trials:   DefaultTrials, Warmup: DefaultWarmup, Duration: DefaultDuration, Evidence: DefaultEvidence,
				Source: "t.yaml",
			},
		},
		{
			name: "pingpong",
			yaml: "name: p\nworkload:\n  kind: pingpong\ntracers:\n  sched:\n",
			want: Scenario{
				Name:     "p",
				Workload: Workload{Kind: "pingpong", Pairs: 1, Params: &Pingpong{Channel: "pipe"}},
				Tracers:  Tracers{"sched": &sched.Config{}},
				Trials:   DefaultTrials, Warmup: DefaultWarmup, Duration: DefaultDuration, Evidence: DefaultEvidence,
				Source: "t.yaml",
			},
		},
		{
			name: "timer needs no tracer",
			yaml: "name: t\nworkload: {kind: timer, priority: 10}\ntrials: 3\nwarmup: 0\nduration: 1.5s\n",
			want: Scenario{
				Name: "t",
				Workload: Workload{Kind: "timer", Threads: 1, Params: &Timer{Interval: time.Millisecond, Priority: 10,
					MLock: ref(true), DMALatency: ref(0), Sleep: TimerSleepRaw}},
				Trials: 3, Warmup: 0, Duration: 1500 * time.Millisecond, Evidence: DefaultEvidence,
				Source: "t.yaml",
			},
		},
		{
			name: "timer without mlock or dma_latency",
			yaml: "name: t\nworkload: {kind: timer, mlock: false, dma_latency: -1}\n",
			want: Scenario{
				Name:     "t",
				Workload: Workload{Kind: "timer", Threads: 1, Params: &Timer{Interval: time.Millisecond, MLock: ref(false), DMALatency: ref(DMALatencyLeave), Sleep: TimerSleepRaw}},
				Trials:   DefaultTrials, Warmup: DefaultWarmup, Duration: DefaultDuration, Evidence: DefaultEvidence,
				Source: "t.yaml",
			},
		},
		{
			name: "timer on listed CPUs",
			yaml: "name: t\nworkload: {kind: timer, threads: 3, cpus: \"3,0-1\"}\n",
			want: Scenario{
				Name:     "t",
				Workload: Workload{Kind: "timer", Threads: 3, CPUs: []int{0, 1, 3}, Params: &Timer{Interval: time.Millisecond, MLock: ref(true), DMALatency: ref(0), Sleep: TimerSleepRaw}},
				Trials:   DefaultTrials, Warmup: DefaultWarmup, Duration: DefaultDuration, Evidence: DefaultEvidence,
				Source: "t.yaml",
			},
		},
		{
			name: "timer on one CPU, a YAML integer",
			yaml: "name: t\nworkload: {kind: timer, cpus: 1}\n",
			want: Scenario{
				Name:     "t",
				Workload: Workload{Kind: "timer", Threads: 1, CPUs: []int{1}, Params: &Timer{Interval: time.Millisecond, MLock: ref(true), DMALatency: ref(0), Sleep: TimerSleepRaw}},
				Trials:   DefaultTrials, Warmup: DefaultWarmup, Duration: DefaultDuration, Evidence: DefaultEvidence,
				Source: "t.yaml",
			},
		},
		{
			name: "fork",
			yaml: "name: f\nworkload: {kind: fork, noise: 2}\ntracers: {sched: {}}\n",
			want: Scenario{
				Name:     "f",
				Workload: Workload{Kind: "fork", Threads: 1, Noise: 2, Params: &Fork{Mode: "fork"}},
				Tracers:  Tracers{"sched": &sched.Config{}},
				Trials:   DefaultTrials, Warmup: DefaultWarmup, Duration: DefaultDuration, Evidence: DefaultEvidence,
				Source: "t.yaml",
			},
		},
		{
			name: "noise defaults to one hog per CPU",
			yaml: "name: n\nworkload: {kind: noise}\ntracers: {sched: {}}\n",
			want: Scenario{
				Name:     "n",
				Workload: Workload{Kind: "noise", Noise: NoiseNumCPU},
				Tracers:  Tracers{"sched": &sched.Config{}},
				Trials:   DefaultTrials, Warmup: DefaultWarmup, Duration: DefaultDuration, Evidence: DefaultEvidence,
				Source: "t.yaml",
			},
		},
		{
			name: "gate",
			yaml: `name: g
description: |
  two lines
  of text
workload: {kind: pingpong, channel: futex, noise: ncpu}
tracers: {syscall: {syscalls: [futex]}, sched: {}}
gate:
  "*": {p50: 5%, max: 1.5%}
  syscall.futex:
    p99: 0.2
    p99.9: 1
`,
			want: Scenario{
				Name:        "g",
				Description: "two lines\nof text",
				Workload:    Workload{Kind: "pingpong", Pairs: 1, Noise: NoiseNumCPU, Params: &Pingpong{Channel: "futex"}},
				Tracers:     Tracers{"syscall": &syscalls.Config{Syscalls: []string{"futex"}}, "sched": &sched.Config{}},
				Trials:      DefaultTrials, Warmup: DefaultWarmup, Duration: DefaultDuration, Evidence: DefaultEvidence,
				Gate: map[string]map[string]float64{
					"*":             {"p50": 0.05, "max": 0.015},
					"syscall.futex": {"p99": 0.2, "p99.9": 1},
				},
				Source: "t.yaml",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse("t.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// good is a valid scenario the bad inputs below are variations of.
const good = `name: syscall-read
description: read
workload:
  kind: syscall
  syscall: read
  size: 4096
tracers:
  syscall:
    syscalls: [read]
  sched: {}
trials: 5
warmup: 1s
duration: 5s
gate:
  syscall.read:
    p99: 10%
`

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string // the whole "file:line:column: " prefix and a part of the message
	}{
		{"unknown top-level key", strings.Replace(good, "trials:", "trails:", 1),
			`x.yaml:11:1: unknown key "trails" in scenario; allowed: name, description, workload, tracers, trials, warmup, duration, evidence, gate`},
		{"unknown workload key", strings.Replace(good, "  size: 4096", "  sise: 4096", 1),
			`x.yaml:6:3: unknown key "sise" in workload; allowed: kind, syscall, size, threads, rate, cpus, noise, channel, pairs, interval, priority, mlock, dma_latency, sleep, mode`},
		{"bad kind", strings.Replace(good, "kind: syscall", "kind: sycall", 1),
			`x.yaml:4:9: unknown workload kind "sycall"; allowed: syscall, pingpong, timer, fork, noise`},
		{"bad workload syscall", strings.Replace(good, "syscall: read", "syscall: reed", 1),
			`x.yaml:5:12: unknown syscall for the syscall workload "reed"; allowed: read, write, getppid`},
		{"bad traced syscall", strings.Replace(good, "[read]", "[read, wriet]", 1),
			`x.yaml:9:22: unknown syscall "wriet"; near: write`},
		{"negative duration", strings.Replace(good, "duration: 5s", "duration: -5s", 1),
			`x.yaml:13:11: duration must not be negative, got -5s`},
		{"negative warmup", strings.Replace(good, "warmup: 1s", "warmup: -1ms", 1),
			`x.yaml:12:9: warmup must not be negative`},
		{"duration without unit", strings.Replace(good, "duration: 5s", "duration: 5", 1),
			`x.yaml:13:11: duration "5" has no unit; write e.g. 500ms or 5s`},
		{"bad threshold", strings.Replace(good, "p99: 10%", "p99: ten%", 1),
			`x.yaml:16:10: bad threshold "ten%" for p99; write a percentage such as 10% or a fraction such as 0.10`},
		{"threshold as a whole number", strings.Replace(good, "p99: 10%", "p99: 10", 1),
			`x.yaml:16:10: threshold 10 for p99 is a fraction above 1`},
		{"negative threshold", strings.Replace(good, "p99: 10%", "p99: -5%", 1),
			`x.yaml:16:10: threshold "-5%" for p99 must not be negative`},
		{"threshold that passes anything", strings.Replace(good, "p99: 10%", "p99: 10000000%", 1),
			`x.yaml:16:10: threshold "10000000%" for p99 is above 1000%: a gate that high passes any slowdown; at most 1000%`},
		{"bad percentile", strings.Replace(good, "p99: 10%", "p100: 10%", 1),
			`x.yaml:16:5: unknown percentile "p100" in gate.syscall.read; want pN with 0 < N < 100 (p50, p95, p99, p99.9, p99.99) or max`},
		{"gate on a metric not measured", strings.Replace(good, "syscall.read:", "syscall.write:", 1),
			`x.yaml:15:3: gate names "syscall.write", which this scenario does not measure; metrics: syscall.read, sched.runq, sched.runq_preempted, sched.wakeup_new, or * for all`},
		{"parameter of another kind", strings.Replace(good, "  size: 4096", "  interval: 1ms", 1),
			`x.yaml:6:3: interval does not apply to workload kind syscall; syscall takes: syscall, size, threads, rate, cpus, noise`},
		{"size for getppid", strings.Replace(good, "syscall: read", "syscall: getppid", 1),
			`x.yaml:6:3: size does not apply to syscall getppid`},
		{"bad YAML syntax", strings.Replace(good, "[read]", "[read", 1),
			`x.yaml:10:3: bad YAML: ',' or ']' must be specified`},
		{"duplicate key", good + "trials: 3\n",
			`x.yaml:17:1: bad YAML: mapping key "trials" already defined at [11:1]`},
		{"bad name", strings.Replace(good, "name: syscall-read", "name: Syscall_Read", 1),
			`x.yaml:1:7: bad name "Syscall_Read"; use lowercase letters, digits and dashes`},
		{"no name", strings.Replace(good, "name: syscall-read\n", "", 1),
			`x.yaml:1:1: scenario has no name`},
		{"no kind", strings.Replace(good, "  kind: syscall\n", "", 1),
			`x.yaml:3:1: workload has no kind; allowed: syscall, pingpong, timer, fork, noise`},
		{"threads out of range", strings.Replace(good, "  size: 4096", "  threads: 0", 1),
			`x.yaml:6:12: threads must be from 1 to 256, got 0`},
		{"threads not an integer", strings.Replace(good, "  size: 4096", "  threads: two", 1),
			`x.yaml:6:12: threads must be an integer from 1 to 256, got a string "two"`},
		{"trials zero", strings.Replace(good, "trials: 5", "trials: 0", 1),
			`x.yaml:11:9: trials must be from 1 to 1000, got 0`},
		{"negative rate", strings.Replace(good, "  size: 4096", "  rate: -3", 1),
			`x.yaml:6:9: rate must be a number from 0 (closed loop)`},
		{"bad noise", strings.Replace(good, "  size: 4096", "  noise: lots", 1),
			`x.yaml:6:10: noise must be "ncpu" or a number of hog threads`},
		{"sched tracer option", strings.Replace(good, "sched: {}", "sched: {cpus: 1}", 1),
			`x.yaml:10:11: unknown key "cpus" in tracers.sched; the sched tracer has no options`},
		{"unknown tracer", strings.Replace(good, "sched: {}", "disk: {}", 1),
			`x.yaml:10:3: unknown key "disk" in tracers; allowed: syscall, sched`},
		{"syscalls not a list", strings.Replace(good, "[read]", "read", 1),
			`x.yaml:9:15: syscalls must be a list of syscall names`},
		{"empty syscalls", strings.Replace(good, "[read]", "[]", 1),
			`x.yaml:9:15: syscalls is empty`},
		{"syscall tracer without syscalls", "name: p\nworkload: {kind: pingpong}\ntracers:\n  syscall: {}\n",
			`x.yaml:4:3: the syscall tracer needs syscalls`},
		{"measures nothing", "name: p\nworkload: {kind: pingpong}\n",
			`x.yaml:1:1: scenario measures nothing`},
		{"bad channel", "name: p\nworkload: {kind: pingpong, channel: socket}\ntracers: {sched: {}}\n",
			`x.yaml:2:37: unknown pingpong channel "socket"; allowed: pipe, eventfd, futex`},
		{"bad mode", "name: p\nworkload:\n  kind: fork\n  mode: exec\ntracers: {sched: {}}\n",
			`x.yaml:4:9: unknown fork mode "exec"; allowed: fork, thread`},
		{"interval too short", "name: p\nworkload:\n  kind: timer\n  interval: 1us\n",
			`x.yaml:4:13: interval must be from 10µs to 1s, got 1us`},
		{"priority too high", "name: p\nworkload:\n  kind: timer\n  priority: 100\n",
			`x.yaml:4:13: priority must be from 0 to 99, got 100`},
		{"mlock not a boolean", "name: p\nworkload:\n  kind: timer\n  mlock: 1\n",
			`x.yaml:4:10: mlock must be true or false, got an integer "1"`},
		{"mlock for another kind", "name: p\nworkload:\n  kind: pingpong\n  mlock: true\n",
			`x.yaml:4:3: mlock does not apply to workload kind pingpong; pingpong takes: channel, pairs, cpus, noise`},
		{"dma_latency below -1", "name: p\nworkload:\n  kind: timer\n  dma_latency: -2\n",
			`x.yaml:4:16: dma_latency must be an integer from 0 to 1000000 µs held in /dev/cpu_dma_latency, or -1 to leave it alone, got "-2"`},
		{"dma_latency a duration", "name: p\nworkload: {kind: timer, dma_latency: 10us}\n",
			`x.yaml:2:38: dma_latency must be an integer from 0 to 1000000 µs held in /dev/cpu_dma_latency, or -1 to leave it alone, got "10us"`},
		{"unknown timer sleep", "name: p\nworkload:\n  kind: timer\n  sleep: busy\n",
			`x.yaml:4:10: unknown timer sleep "busy"; allowed: raw, runtime`},
		{"cpus range backwards", "name: p\nworkload:\n  kind: timer\n  cpus: 3-1\n",
			`x.yaml:4:9: cpus: "3-1" in "3-1": the range ends before it starts`},
		{"cpus not numbers", "name: p\nworkload:\n  kind: timer\n  cpus: all\n",
			`x.yaml:4:9: cpus: "all" in "all": want a CPU number from 0 to 1023`},
		{"cpus listed twice", "name: p\nworkload:\n  kind: timer\n  cpus: 0-2,1\n",
			`x.yaml:4:9: cpus: CPU 1 is listed twice in "0-2,1"`},
		{"cpus for another kind", "name: p\nworkload:\n  kind: fork\n  cpus: 1\n",
			`x.yaml:4:3: cpus does not apply to workload kind fork; fork takes: mode, threads, noise`},
		{"empty", "", `x.yaml:1:1: empty scenario`},
		{"not a mapping", "- a\n- b\n", `x.yaml:1:1: scenario must be a mapping, got a list`},
		{"two documents", good + "---\nname: b\n", `x.yaml:18:1: a second YAML document`},
		{"alias", strings.Replace(good, "trials: 5", "trials: &n 5", 1),
			`x.yaml:11:9: anchors and aliases are not supported`},
		{"workload not a mapping", "name: w\nworkload: syscall\n",
			`x.yaml:2:11: workload must be a mapping, got a string`},
		{"unterminated quote", strings.Replace(good, "description: read", `description: "read`, 1),
			`x.yaml:2:14: bad YAML: could not find end character of double-quoted text`},
		{"tab indentation", strings.Replace(good, "  kind: syscall", "\tkind: syscall", 1),
			`x.yaml:4:`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatalf("no error; want %q", tt.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %q is not a *ParseError", err, err)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error\n  %s\nwant prefix\n  %s", err, tt.want)
			}
		})
	}
}

func TestParseValid(t *testing.T) {
	s, err := Parse("x.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(result.GatePolicy{"syscall.read": {"p99": 0.10}}, s.Gate); diff != "" {
		t.Errorf("gate (-want +got):\n%s", diff)
	}
}

func TestMetrics(t *testing.T) {
	tests := []struct {
		name string
		s    Scenario
		want []string
	}{
		{"syscalls in order", Scenario{Tracers: Tracers{"syscall": &syscalls.Config{Syscalls: []string{"write", "read"}}}},
			[]string{"syscall.write", "syscall.read"}},
		{"sched", Scenario{Tracers: Tracers{"sched": &sched.Config{}}},
			[]string{"sched.runq", "sched.runq_preempted", "sched.wakeup_new"}},
		{"timer", Scenario{Workload: Workload{Kind: "timer"}, Tracers: Tracers{"syscall": &syscalls.Config{Syscalls: []string{"clock_nanosleep"}}}},
			[]string{"syscall.clock_nanosleep", "timer.lateness"}},
		{"nothing", Scenario{Workload: Workload{Kind: "fork"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Metrics(&tt.s)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParams(t *testing.T) {
	base, err := Parse("a.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	p := Params(base)
	if len(p) != 64 {
		t.Fatalf("Params = %q; want 64 hex digits", p)
	}
	same := func(s *Scenario) {
		s.Trials = 9
		s.Warmup = 0
		s.Gate = nil
		s.Description = "x"
		s.Name = "other"
		s.Source = "b"
	}
	tests := []struct {
		name   string
		change func(s *Scenario)
		same   bool
	}{
		{"trials, warmup, gate, name, description, source", same, true},
		{"zero workload fields are their defaults", func(s *Scenario) { s.Workload.Params, s.Workload.Threads = &Syscall{}, 0 }, true},
		{"syscall order", func(s *Scenario) { s.Tracers["syscall"].(*syscalls.Config).Syscalls = []string{"read", "read"} }, true},
		{"duration", func(s *Scenario) { s.Duration++ }, false},
		{"size", func(s *Scenario) { s.Workload.Params = &Syscall{Name: "read", Size: 8192} }, false},
		{"threads", func(s *Scenario) { s.Workload.Threads = 2 }, false},
		{"noise", func(s *Scenario) { s.Workload.Noise = NoiseNumCPU }, false},
		{"sched tracer off", func(s *Scenario) { delete(s.Tracers, "sched") }, false},
		{"another syscall", func(s *Scenario) { s.Tracers["syscall"].(*syscalls.Config).Syscalls = []string{"read", "write"} }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := Parse("a.yaml", []byte(good))
			tt.change(s)
			if got := Params(s) == p; got != tt.same {
				t.Errorf("same digest = %v, want %v", got, tt.same)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(path, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: x\nkind: y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, arg, wantName, wantErr string
	}{
		{"builtin", "timer-1ms", "timer-1ms", ""},
		{"builtin source", "builtin:fork-exit.yaml", "fork-exit", ""},
		{"file", path, "syscall-read", ""},
		{"unknown name", "timer-2ms", "", `unknown scenario "timer-2ms"; built-in: fork-exit, fsync, fsync-scratch, kfunc-clone, kfunc-vfs-read, pipe-pingpong, runq-under-noise, syscall-read, syscall-write, tcp-rr, tcp-rr-small, timer-1ms`},
		{"unknown builtin", "builtin:nope", "", `unknown scenario "builtin:nope"`},
		{"missing file", filepath.Join(dir, "nope.yaml"), "", "read scenario: open "},
		{"bad file", bad, "", bad + `:2:1: unknown key "kind" in scenario`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Lookup(tt.arg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Name != tt.wantName {
				t.Errorf("name = %q, want %q", s.Name, tt.wantName)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range Builtin() {
		b, err := builtinFS.ReadFile("builtin/" + s.Name + ".yaml")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(good))
	f.Add([]byte("name: x\nworkload: {kind: timer, interval: 1us}\n"))
	f.Add([]byte("a: [\n"))
	f.Add([]byte("- &a [*a]\n"))
	f.Add([]byte("gate: {'*': {p99: 1e309}}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse("fuzz.yaml", b)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %q is not a *ParseError", err, err)
			}
			if pe.Line < 1 || pe.Column < 1 {
				t.Fatalf("position %d:%d in %q", pe.Line, pe.Column, err)
			}
			return
		}
		if len(Metrics(s)) == 0 {
			t.Fatal("a valid scenario measures nothing")
		}
		if err := s.Workload.check(); err != nil {
			t.Fatalf("a parsed workload fails its check: %v", err)
		}
	})
}
