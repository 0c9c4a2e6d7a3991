package tracing

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cilium/ebpf"
)

// ProgramLoad is what the kernel's verifier spent on one program.
type ProgramLoad struct {
	Program string
	// Insns is the instructions the verifier processed (its log's
	// "processed N insns"): every path it walked, so it grows by orders
	// of magnitude when state pruning fails, while the program's own
	// length does not.
	Insns uint32
	// Verify is the verifier's own time for the program, from its
	// statistics log; 0 when the load kept no log (VerifierStats).
	Verify time.Duration
}

// LoadCost is what loading a tracer's object cost.
type LoadCost struct {
	// Took is the whole load: maps, BTF, every program; not the attach.
	Took time.Duration
	// Programs are the object's programs, by name.
	Programs []ProgramLoad
}

// Slowest returns the program the verifier spent the longest on (the
// most instructions where no time was kept), and false for no programs.
func (c LoadCost) Slowest() (ProgramLoad, bool) {
	if len(c.Programs) == 0 {
		return ProgramLoad{}, false
	}
	return slices.MaxFunc(c.Programs, func(a, b ProgramLoad) int {
		return cmp.Or(cmp.Compare(a.Verify, b.Verify), cmp.Compare(a.Insns, b.Insns))
	}), true
}

// LoadCost returns what loading the tracer cost.
func (t *Tracer) LoadCost() (LoadCost, error) {
	return CollectionCost(t.coll, t.loadTook)
}

// CollectionCost is the LoadCost of coll, loaded by NewCollection in
// took.
func CollectionCost(coll *ebpf.Collection, took time.Duration) (LoadCost, error) {
	c := LoadCost{Took: took}
	for name, p := range coll.Programs {
		info, err := p.Info()
		if err != nil {
			return c, fmt.Errorf("info of %s: %w", name, err)
		}
		insns, ok := info.VerifiedInstructions()
		if !ok {
			// Kernels before 5.16 do not say; the statistics log may.
			insns = logInsns(p.VerifierLog)
		}
		c.Programs = append(c.Programs, ProgramLoad{Program: name, Insns: insns, Verify: logVerifyTime(p.VerifierLog)})
	}
	slices.SortFunc(c.Programs, func(a, b ProgramLoad) int { return strings.Compare(a.Program, b.Program) })
	return c, nil
}

var (
	logTimeRe  = regexp.MustCompile(`(?m)^verification time (\d+) usec$`)
	logInsnsRe = regexp.MustCompile(`(?m)^processed (\d+) insns`)
)

// logVerifyTime reads "verification time N usec" from a verifier log at
// ebpf.LogLevelStats.
func logVerifyTime(log string) time.Duration {
	m := logTimeRe.FindStringSubmatch(log)
	if m == nil {
		return 0
	}
	us, _ := strconv.ParseInt(m[1], 10, 64)
	return time.Duration(us) * time.Microsecond
}

// logInsns reads "processed N insns" from a verifier log.
func logInsns(log string) uint32 {
	m := logInsnsRe.FindStringSubmatch(log)
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseUint(m[1], 10, 32)
	return uint32(n)
}

// NewCollection loads spec as ebpf.NewCollectionWithOptions does and
// says how long it took. With stats, each program keeps the verifier's
// statistics log (its time, see CollectionCost); a rejection's log still
// holds the verifier's reason, which it prints at any log level.
func NewCollection(spec *ebpf.CollectionSpec, opts ebpf.CollectionOptions, stats bool) (*ebpf.Collection, time.Duration, error) {
	if stats {
		opts.Programs.LogLevel |= ebpf.LogLevelStats
	}
	start := time.Now()
	coll, err := ebpf.NewCollectionWithOptions(spec, opts)
	return coll, time.Since(start), err
}
