package vm

import (
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/symbols"
	"github.com/tailgate-ci/tailgate/kernels"
)

// systemMap reads the symbols of k's own text: a build tree's System.map,
// else those a guest of k sent once and the cache keeps (kallsymsCache).
// nil when there are none (a Debian kernel's first boot here) or they
// cannot be read: the guest then names its stacks itself.
func systemMap(k *kernels.Kernel) *symbols.SystemMap {
	if k == nil {
		return nil
	}
	for _, p := range []string{k.SystemMap, kallsymsCache(k)} {
		if p == "" {
			continue
		}
		if m := readSystemMap(p); m != nil {
			return m
		}
	}
	return nil
}

// systemMaps are the System.maps read so far by this process, by path, for
// as long as the file is the same (size and time): a gate or matrix boots
// the same kernel dozens of times, and a Debian kernel's kept symbols
// take about 40 ms to read.
var systemMaps struct {
	sync.Mutex
	byPath map[string]keptSystemMap
}

type keptSystemMap struct {
	size  int64
	mtime time.Time
	m     *symbols.SystemMap
}

// readSystemMap reads the System.map at path, or returns the one read
// before if the file has not changed since; nil if it cannot be read.
func readSystemMap(path string) *symbols.SystemMap {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	systemMaps.Lock()
	defer systemMaps.Unlock()
	if k, ok := systemMaps.byPath[path]; ok && k.size == fi.Size() && k.mtime.Equal(fi.ModTime()) {
		return k.m
	}
	m, err := symbols.ReadSystemMap(path)
	if err != nil {
		return nil
	}
	if systemMaps.byPath == nil {
		systemMaps.byPath = map[string]keptSystemMap{}
	}
	systemMaps.byPath[path] = keptSystemMap{size: fi.Size(), mtime: fi.ModTime(), m: m}
	return m
}

// kallsymsCache is where the cache keeps the kernel symbols a guest of k
// sent, beside the cached kernel: "" for a kernel not in the cache, or
// not booted from its ELF vmlinux (a bzImage boot may place the kernel
// at a random address: KASLR).
func kallsymsCache(k *kernels.Kernel) string {
	if k == nil || k.Dir == "" || k.Vmlinux == "" {
		return ""
	}
	return filepath.Join(k.Dir, "kallsyms")
}

// keepKallsyms keeps the symbols a guest sent to path in the cache, if
// they name the kernel's text (the guest may have sent nothing). A failure
// only means the next boot's guest reads its kallsyms again.
func keepKallsyms(k *kernels.Kernel, path string) {
	dst := kallsymsCache(k)
	if dst == "" {
		return
	}
	// The guest wrote the file: it is read only within its limit.
	b, err := readCapped(path, maxKallsyms)
	if err != nil {
		return
	}
	if _, err := symbols.ReadSystemMap(path); err != nil {
		return
	}
	result.WriteFileAtomic(dst, b)
}

// nameGuestFrames names the kernel frames a guest left as hex
// (GuestRequest.KernelText), its slowest events' and its sampled
// profiles', from its kernel's System.map, then drops the leading frames
// of the tracing machinery, as a host run does.
func nameGuestFrames(res *result.Result, m *symbols.SystemMap) {
	if res == nil || m == nil {
		return
	}
	for si := range res.Scenarios {
		for _, rm := range res.Scenarios[si].Metrics {
			for ti := range rm.Trials {
				tr := &rm.Trials[ti]
				for ei := range tr.Slowest {
					e := &tr.Slowest[ei]
					e.KernelStack = m.NameStack(e.KernelStack)
				}
				if tr.Profile == nil {
					continue
				}
				for pi := range tr.Profile.Samples {
					ps := &tr.Profile.Samples[pi]
					ps.Kernel = m.NameStack(ps.Kernel)
				}
			}
		}
	}
}
