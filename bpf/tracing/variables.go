package tracing

import (
	"encoding/binary"
	"fmt"

	"github.com/cilium/ebpf"
)

// variable is a global variable of a loaded object, read and written
// through its section's memory-mapped map, as ebpf.Variable is; it also
// serves a collection made from inherited descriptors (ImportLoaded),
// which has no ebpf.Variables.
type variable struct {
	name   string
	offset int64
	size   int
	mem    *ebpf.Memory
}

// variablesOf returns the writable global variables of coll, loaded from
// spec, by name. Constants are left out: they are set before a load.
func variablesOf(coll *ebpf.Collection, spec *ebpf.CollectionSpec) (map[string]*variable, error) {
	vars := map[string]*variable{}
	for name, vs := range spec.Variables {
		if vs.Constant() {
			continue
		}
		m := coll.Maps[vs.SectionName]
		if m == nil {
			continue
		}
		mem, err := m.Memory()
		if err != nil {
			return nil, fmt.Errorf("variable %s: %w", name, err)
		}
		vars[name] = &variable{name: name, offset: int64(vs.Offset), size: int(vs.Size()), mem: mem}
	}
	return vars, nil
}

// Set writes v, a fixed-size value of the variable's size.
func (v *variable) Set(in any) error {
	b, err := binary.Append(nil, binary.NativeEndian, in)
	if err != nil {
		return fmt.Errorf("variable %s: %w", v.name, err)
	}
	if len(b) != v.size {
		return fmt.Errorf("variable %s: %d bytes, want %d", v.name, len(b), v.size)
	}
	if _, err := v.mem.WriteAt(b, v.offset); err != nil {
		return fmt.Errorf("variable %s: %w", v.name, err)
	}
	return nil
}

// Get reads the variable into out, a pointer to a value of its size.
func (v *variable) Get(out any) error {
	b := make([]byte, v.size)
	if _, err := v.mem.ReadAt(b, v.offset); err != nil {
		return fmt.Errorf("variable %s: %w", v.name, err)
	}
	if _, err := binary.Decode(b, binary.NativeEndian, out); err != nil {
		return fmt.Errorf("variable %s: %w", v.name, err)
	}
	return nil
}
