package tracing

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// zeroKeys writes zeros to keys 0 to n-1 of an array or per-CPU array
// map: in one batch update (zeroBatch), or, where the kernel has none,
// key by key.
func zeroKeys(m *ebpf.Map, n int) error {
	err := zeroBatch(m, n)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP) {
		return zeroEach(m, n)
	}
	return err
}

// batchAttr is the part of union bpf_attr the BPF_MAP_*_BATCH commands
// read.
type batchAttr struct {
	inBatch, outBatch, keys, values uint64
	count, mapFD                    uint32
	elemFlags, flags                uint64
}

// zeroBatch writes zeros to keys 0 to n-1 of an array or per-CPU array
// map in one BPF_MAP_UPDATE_BATCH of a zeroed buffer. cilium/ebpf's
// BatchUpdate marshals each value of a per-CPU map on its own, which for
// a histogram's tens of thousands of slots took about as long as the
// kernel's own work, in every trial (BENCHMARKS.md, "A trial's fixed
// cost, cut").
func zeroBatch(m *ebpf.Map, n int) error {
	if n <= 0 {
		return nil
	}
	size := int(m.ValueSize())
	if m.Type() == ebpf.PerCPUArray {
		cpus, err := ebpf.PossibleCPU()
		if err != nil {
			return err
		}
		size = (size + 7) &^ 7 * cpus // each CPU's value 8-byte aligned
	}
	keys := make([]uint32, n)
	for i := range keys {
		keys[i] = uint32(i)
	}
	vals := make([]byte, n*size)
	attr := batchAttr{
		keys:   uint64(uintptr(unsafe.Pointer(&keys[0]))),
		values: uint64(uintptr(unsafe.Pointer(&vals[0]))),
		count:  uint32(n),
		mapFD:  uint32(m.FD()),
	}
	_, _, errno := unix.Syscall(unix.SYS_BPF, unix.BPF_MAP_UPDATE_BATCH, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
	runtime.KeepAlive(keys)
	runtime.KeepAlive(vals)
	switch {
	case errno != 0:
		return fmt.Errorf("batch update: %w", errno)
	case int(attr.count) != n:
		return fmt.Errorf("batch update: %d of %d keys", attr.count, n)
	}
	return nil
}

// zeroEach writes zeros to keys 0 to n-1 one by one.
func zeroEach(m *ebpf.Map, n int) error {
	elem := reflect.ArrayOf(int(m.ValueSize()), reflect.TypeFor[byte]())
	zero := reflect.New(elem).Interface()
	if m.Type() == ebpf.PerCPUArray {
		cpus, err := ebpf.PossibleCPU()
		if err != nil {
			return err
		}
		zero = reflect.MakeSlice(reflect.SliceOf(elem), cpus, cpus).Interface()
	}
	for k := range n {
		if err := m.Put(uint32(k), zero); err != nil {
			return err
		}
	}
	return nil
}
