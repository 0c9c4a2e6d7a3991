package main

import (
	"bufio"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkVMBootToResult measures boot-to-first-result of a VM run under
// TCG: launch of `tailgate run --kernel` to its exit, less the time the
// scenario itself runs (one 200 ms trial, no warmup). The kernel is fetched
// into the cache before timing starts. Beside the total it reports where
// the time goes, from the run's progress lines as they arrive: launch to
// the guest's "ready" line (QEMU, firmware, the kernel's boot, tailgate's
// init: mounts, modules, results port), and in it QEMU's start (launch
// to ready less the guest's clock), the kernel to init and init to ready
// by the guest's own clock; "ready" to the scenario's attach line; attach to the trial's
// line (loading and attaching the tracers, the trial less its 200 ms,
// reading the result), and the trial's line to exit (the Result back, QEMU
// exit, the host's report).
//
//	go test ./cmd/tailgate/ -run '^$' -bench VMBootToResult -benchtime 5x
func BenchmarkVMBootToResult(b *testing.B) {
	bin := buildTailgateB(b)
	const trial = 200 * time.Millisecond
	// -v: the guest's own lines (ready, attach) show only verbose.
	args := []string{"run", "syscall-read", "--kernel", "debian:6.1-cloud", "--accel", "tcg", "--clock", "real",
		"--trials", "1", "--duration", trial.String(), "--warmup", "0s", "-v", "-o", b.TempDir() + "/r.json"}
	if out, err := exec.Command(bin, "kernels", "fetch", "debian:6.1-cloud").CombinedOutput(); err != nil {
		b.Fatalf("fetch: %v\n%s", err, out)
	}
	splits := map[string][]float64{}
	add := func(k string, d time.Duration) { splits[k] = append(splits[k], d.Seconds()) }
	readyRe := regexp.MustCompile(`guest ready at ([0-9.]+)s since boot \(init at ([0-9.]+)s`)
	for range b.N {
		cmd := exec.Command(bin, args...)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		var ready, attach, done time.Duration
		var lines []string
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			l, at := sc.Text(), time.Since(start)
			lines = append(lines, l)
			switch {
			case readyRe.MatchString(l) && ready == 0:
				ready = at
				m := readyRe.FindStringSubmatch(l)
				g, gerr := strconv.ParseFloat(m[1], 64)
				i, ierr := strconv.ParseFloat(m[2], 64)
				if gerr == nil && ierr == nil {
					splits["guest clock at ready"] = append(splits["guest clock at ready"], g)
					// The guest's clock starts with its kernel; the
					// rest of launch to ready is QEMU and firmware.
					splits["qemu start"] = append(splits["qemu start"], at.Seconds()-g)
					splits["kernel to init"] = append(splits["kernel to init"], i)
					splits["init to ready"] = append(splits["init to ready"], g-i)
				}
			case strings.HasSuffix(l, ": attach") && attach == 0:
				attach = at
			case strings.Contains(l, "trial 1/1 done") && done == 0:
				done = at
			}
		}
		if err := cmd.Wait(); err != nil {
			b.Fatalf("run: %v\n%s", err, strings.Join(lines, "\n"))
		}
		total := time.Since(start)
		if ready == 0 || attach == 0 || done == 0 {
			b.Fatalf("progress lines missing (ready %v, attach %v, trial %v):\n%s", ready, attach, done, strings.Join(lines, "\n"))
		}
		add("total", total-trial)
		add("launch to ready", ready)
		add("ready to attach", attach-ready)
		add("attach to trial done", done-attach-trial)
		add("trial done to exit", total-done)
	}
	b.ReportMetric(0, "ns/op")
	for k, v := range splits {
		sort.Float64s(v)
		unit := "s-median:" + strings.ReplaceAll(k, " ", "-")
		b.ReportMetric(v[len(v)/2], unit)
		if k == "total" {
			b.ReportMetric(v[0], "s-min")
			b.ReportMetric(v[len(v)-1], "s-max")
		}
	}
}

func buildTailgateB(b *testing.B) string {
	b.Helper()
	bin := b.TempDir() + "/tailgate"
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
