package tracing

import (
	"bytes"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/rlimit"
)

// zeroBatch, in one batch, and zeroEach, key by key, zero keys 0 to n-1
// of an array, on every CPU of a per-CPU one, whatever the value's size,
// and leave the keys beyond n alone.
func TestZeroKeys(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		typ       ebpf.MapType
		valueSize uint32
	}{
		{"per-CPU counters", ebpf.PerCPUArray, 8},
		{"per-CPU stats", ebpf.PerCPUArray, 32},
		{"per-CPU unaligned", ebpf.PerCPUArray, 12},
		{"array", ebpf.Array, 12},
	}
	zeroes := []struct {
		name string
		zero func(*ebpf.Map, int) error
	}{{"batch", zeroBatch}, {"each", zeroEach}}
	for _, tt := range tests {
		for _, z := range zeroes {
			t.Run(tt.name+"/"+z.name, func(t *testing.T) {
				const entries, n = 3000, 2999
				m, err := ebpf.NewMap(&ebpf.MapSpec{Type: tt.typ, KeySize: 4, ValueSize: tt.valueSize, MaxEntries: entries})
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				filled := bytes.Repeat([]byte{0xa5}, int(tt.valueSize))
				for k := range uint32(entries) {
					if err := m.Put(k, perCPUs(t, m, filled)); err != nil {
						t.Fatal(err)
					}
				}
				if err := z.zero(m, n); err != nil {
					t.Fatal(err)
				}
				for k := range uint32(entries) {
					for cpu, v := range lookupAll(t, m, k) {
						zeroed := bytes.Count(v, []byte{0}) == len(v)
						if k < n && !zeroed || k >= n && !bytes.Equal(v, filled) {
							t.Fatalf("key %d CPU %d: %x after zeroing keys below %d", k, cpu, v, n)
						}
					}
				}
			})
		}
	}
}

// perCPUs is v for every CPU of a per-CPU map, else v.
func perCPUs(t *testing.T, m *ebpf.Map, v []byte) any {
	if m.Type() != ebpf.PerCPUArray {
		return v
	}
	cpus, err := ebpf.PossibleCPU()
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]byte, cpus)
	for i := range out {
		out[i] = v
	}
	return out
}

// lookupAll is key k's value on each CPU of a per-CPU map, else its one.
func lookupAll(t *testing.T, m *ebpf.Map, k uint32) [][]byte {
	var out [][]byte
	var err error
	if m.Type() == ebpf.PerCPUArray {
		err = m.Lookup(k, &out)
	} else {
		var one []byte
		err = m.Lookup(k, &one)
		out = [][]byte{one}
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}
