// Package kerneltypes cuts a kernel's BTF down to the types tailgate's BPF
// objects relocate against (CO-RE), in the manner of bpftool's
// gen min_core_btf: a guest under TCG spends 0.35-0.4 s decoding its
// kernel's whole BTF (some 126,000 types) before its first tracer loads,
// where the cut, made once per kernel on the host and kept in the kernel
// cache, holds about 1,600 and decodes at once.
//
// What is kept: every type of the kernel whose name is the essential name
// (a ___flavour suffix cut) of a named struct, union, enum, typedef, int
// or float in the objects' own BTF, since a CO-RE relocation is rooted at
// such a local type and finds its target by that name; with everything
// those hold by value (members, array elements, typedefs' targets,
// qualifiers), since a relocation's accessor walks through members and
// array elements; and pointers, cut to pointers to void: an accessor never
// goes through a pointer (reading p->a->b is two relocations, each rooted
// at a named type), and a pointer member relocates as a pointer whatever
// it points to. Type IDs are not the kernel's, so the cut serves CO-RE
// alone: what needs the kernel's own type IDs (a tp_btf or fentry
// program's attach point, bpf_core_type_id_kernel) cannot use it, and
// bpf/tracing attaches raw_tp programs with it.
package kerneltypes

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
)

// Version changes whenever Cut would make a different cut of the same
// kernel for the same names: a kept cut is named by it and the names.
const Version = 1

// Names returns the names to keep for objs, increasing: the essential
// names of the named types a relocation of theirs can be rooted at, and
// extra (such as the btf_trace_ typedefs of tracepoints a loader looks
// up).
func Names(objs []*ebpf.CollectionSpec, extra ...string) []string {
	set := map[string]bool{}
	for _, name := range extra {
		set[name] = true
	}
	for _, o := range objs {
		if o.Types == nil {
			continue
		}
		for t, err := range o.Types.All() {
			if err != nil {
				// A data section whose size the loader fixes up later:
				// no relocation's root.
				continue
			}
			switch t.(type) {
			case *btf.Struct, *btf.Union, *btf.Enum, *btf.Typedef, *btf.Int, *btf.Float, *btf.Fwd:
			default:
				continue
			}
			if name := essential(t.TypeName()); name != "" {
				set[name] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// essential cuts a flavour suffix (task_struct___old is task_struct), as
// CO-RE matches names.
func essential(name string) string {
	if i := strings.LastIndex(name, "___"); i > 0 {
		return name[:i]
	}
	return name
}

// Cut returns raw BTF of kernel's types named names, with what they hold
// by value and pointers cut to void (see the package doc), and how many
// types it holds.
func Cut(kernel *btf.Spec, names []string) ([]byte, int, error) {
	c := cutter{memo: map[btf.Type]btf.Type{}}
	var roots []btf.Type
	for _, name := range names {
		ts, err := kernel.AnyTypesByName(name)
		if errors.Is(err, btf.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, 0, fmt.Errorf("kernel type %s: %w", name, err)
		}
		for _, t := range ts {
			switch t.(type) {
			case *btf.Func, *btf.Var, *btf.Datasec:
				// Named alike, but no relocation's target.
				continue
			}
			roots = append(roots, c.cut(t))
		}
	}
	b, err := btf.NewBuilder(roots, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("cut kernel types: %w", err)
	}
	raw, err := b.Marshal(nil, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("cut kernel types: %w", err)
	}
	return raw, len(c.memo), nil
}

// Load reads what Cut wrote.
func Load(raw []byte) (*btf.Spec, error) {
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("kernel types: %w", err)
	}
	return spec, nil
}

type cutter struct {
	memo map[btf.Type]btf.Type
}

// cut copies t with what it holds by value; pointers point to void.
func (c *cutter) cut(t btf.Type) btf.Type {
	if t == nil {
		return nil
	}
	if done, ok := c.memo[t]; ok {
		return done
	}
	switch v := t.(type) {
	case *btf.Pointer:
		out := &btf.Pointer{Target: &btf.Void{}}
		c.memo[t] = out
		return out
	case *btf.Struct:
		out := &btf.Struct{Name: v.Name, Size: v.Size}
		c.memo[t] = out
		out.Members = c.members(v.Members)
		return out
	case *btf.Union:
		out := &btf.Union{Name: v.Name, Size: v.Size}
		c.memo[t] = out
		out.Members = c.members(v.Members)
		return out
	case *btf.Array:
		out := &btf.Array{Nelems: v.Nelems}
		c.memo[t] = out
		out.Index, out.Type = c.cut(v.Index), c.cut(v.Type)
		return out
	case *btf.Typedef:
		out := &btf.Typedef{Name: v.Name}
		c.memo[t] = out
		out.Type = c.cut(v.Type)
		return out
	case *btf.Const:
		out := &btf.Const{}
		c.memo[t] = out
		out.Type = c.cut(v.Type)
		return out
	case *btf.Volatile:
		out := &btf.Volatile{}
		c.memo[t] = out
		out.Type = c.cut(v.Type)
		return out
	case *btf.Restrict:
		out := &btf.Restrict{}
		c.memo[t] = out
		out.Type = c.cut(v.Type)
		return out
	case *btf.TypeTag:
		out := &btf.TypeTag{Value: v.Value}
		c.memo[t] = out
		out.Type = c.cut(v.Type)
		return out
	case *btf.FuncProto:
		out := &btf.FuncProto{}
		c.memo[t] = out
		out.Return = c.cut(v.Return)
		for _, p := range v.Params {
			out.Params = append(out.Params, btf.FuncParam{Name: p.Name, Type: c.cut(p.Type)})
		}
		return out
	case *btf.Int, *btf.Enum, *btf.Float, *btf.Fwd, *btf.Void:
		// Leaves: nothing to follow.
		c.memo[t] = t
		return t
	}
	// A kind that holds nothing a relocation walks through.
	c.memo[t] = t
	return t
}

func (c *cutter) members(ms []btf.Member) []btf.Member {
	out := make([]btf.Member, len(ms))
	for i, m := range ms {
		out[i] = btf.Member{Name: m.Name, Type: c.cut(m.Type), Offset: m.Offset, BitfieldSize: m.BitfieldSize}
	}
	return out
}

// TracepointTypedefs are the names of the BTF typedefs that declare
// tracepoints tps (btf_trace_NAME), for Names' extra: a loader that
// attaches to a tracepoint only where the kernel has it looks them up.
func TracepointTypedefs(tps []string) []string {
	out := make([]string, len(tps))
	for i, tp := range tps {
		out[i] = "btf_trace_" + tp
	}
	return out
}

// ReadVmlinux reads the BTF of a kernel from its uncompressed ELF image
// (the .BTF section), for a kernel that is not running, such as a VM's
// (kernels.Kernel.Vmlinux). btf.LoadSpec wants a symbol table as well,
// which an image extracted from a bzImage has not.
func ReadVmlinux(path string) (*btf.Spec, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("kernel BTF: %w", err)
	}
	defer f.Close()
	sec := f.Section(".BTF")
	if sec == nil {
		return nil, fmt.Errorf("kernel BTF: %s has no .BTF section (a kernel without CONFIG_DEBUG_INFO_BTF)", path)
	}
	spec, err := btf.LoadSpecFromReader(io.NewSectionReader(sec, 0, int64(sec.Size)))
	if err != nil {
		return nil, fmt.Errorf("kernel BTF of %s: %w", path, err)
	}
	return spec, nil
}
