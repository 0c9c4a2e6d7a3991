package runner

import (
	"bufio"
	"bytes"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// cpuSnap is a moment's CPU accounting: each CPU's /proc/stat times and
// this process's own CPU time with its reaped children's, ns.
type cpuSnap struct {
	at   time.Time
	cpus map[int]cpuStat
	own  int64
}

// cpuStat is one CPU's line of /proc/stat, ns: the time busy (neither
// idle nor waiting on I/O) and, of it, in hardirqs, softirqs and stolen by
// the hypervisor.
type cpuStat struct{ busy, irq, softirq, steal int64 }

// userHZ is the unit of /proc/stat's times (USER_HZ, 100 on every Linux
// architecture tailgate runs on).
const userHZ = 100

// takeCPUSnap reads the snapshot; ok is false when /proc/stat cannot be
// read (the trial then records no CPU time).
func takeCPUSnap() (cpuSnap, bool) {
	s := cpuSnap{at: time.Now(), cpus: map[int]cpuStat{}}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 9 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		cpu, err := strconv.Atoi(f[0][3:])
		if err != nil {
			continue
		}
		// user nice system idle iowait irq softirq steal
		var v [8]int64
		for i := range v {
			n, _ := strconv.ParseInt(f[1+i], 10, 64)
			v[i] = n * int64(time.Second) / userHZ
		}
		s.cpus[cpu] = cpuStat{busy: v[0] + v[1] + v[2] + v[5] + v[6] + v[7], irq: v[5], softirq: v[6], steal: v[7]}
	}
	var self, kids unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &self) != nil || unix.Getrusage(unix.RUSAGE_CHILDREN, &kids) != nil {
		return s, false
	}
	for _, r := range []*unix.Rusage{&self, &kids} {
		s.own += r.Utime.Nano() + r.Stime.Nano()
	}
	return s, true
}

// cpuSums are the signed sums behind a CPUTime, ns: what the CPUs spent
// between two snapshots, or over the slices of a trial. /proc/stat counts
// in ticks, so a short window's busy time is off by up to a tick either
// way; the sums keep the sign, so that the errors of many slices cancel
// instead of adding up as positive "other work".
type cpuSums struct {
	window, busy, irq, softirq, steal, own int64
}

// cpuDelta is what cpus (nil: every CPU) spent between before and after;
// its time() is what they spent outside this process and its reaped
// children. The workload's threads are this process's (or its children's,
// for commands): the rest of the busy time is other tasks', the
// interrupts' and the hypervisor's.
func cpuDelta(before, after cpuSnap, cpus []int) cpuSums {
	if cpus == nil {
		for c := range after.cpus {
			cpus = append(cpus, c)
		}
		slices.Sort(cpus)
	}
	d := cpuSums{window: int64(after.at.Sub(before.at)) * int64(len(cpus)), own: after.own - before.own}
	for _, c := range cpus {
		a, b := after.cpus[c], before.cpus[c]
		d.busy += a.busy - b.busy
		d.irq += a.irq - b.irq
		d.softirq += a.softirq - b.softirq
		d.steal += a.steal - b.steal
	}
	return d
}

func (s *cpuSums) add(o cpuSums) {
	s.window += o.window
	s.busy += o.busy
	s.irq += o.irq
	s.softirq += o.softirq
	s.steal += o.steal
	s.own += o.own
}

func (s cpuSums) time() *result.CPUTime {
	t := &result.CPUTime{WindowNs: nonNeg(s.window), HardirqNs: nonNeg(s.irq), SoftirqNs: nonNeg(s.softirq), StealNs: nonNeg(s.steal)}
	t.OtherTasksNs = nonNeg(s.busy - int64(t.HardirqNs+t.SoftirqNs+t.StealNs) - s.own)
	return t
}

func nonNeg(v int64) uint64 {
	if v < 0 {
		return 0
	}
	return uint64(v)
}
