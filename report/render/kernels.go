package render

import (
	"fmt"
	"io"
	"strconv"
)

// CachedKernel is a kernel of the cache as tailgate kernels list shows it.
type CachedKernel struct {
	Spec, Version string
	Vmlinux       bool // boots the uncompressed ELF, else the bzImage
	Modules       int
}

// boots names the image a VM boots.
func (k CachedKernel) boots() string {
	if k.Vmlinux {
		return "vmlinux"
	}
	return "bzImage"
}

// cachedKernelColumns are the cache's columns. Narrowed, the spec (what
// --kernel takes) stays and the rest leave the row: the module count,
// the image, the package version.
var cachedKernelColumns = []Column{
	{Header: "spec", Align: left},
	{Header: "version", Align: left, Fold: 3},
	{Header: "boots", Align: left, Fold: 2},
	{Header: "modules", Align: right, Fold: 1},
}

// WriteCachedKernels lists the kernels cached in dir, a table within
// o.Width.
func WriteCachedKernels(w io.Writer, dir string, ks []CachedKernel, o TextOptions) error {
	ew := &errWriter{w: w}
	for _, l := range wrapHanging(fmt.Sprintf("cached in %s:", dir), o.Width, 2) {
		fmt.Fprintln(ew, l)
	}
	if len(ks) == 0 {
		fmt.Fprintf(ew, "  none\n")
		return ew.err
	}
	if ew.err != nil {
		return ew.err
	}
	t := &FitTable{Columns: cachedKernelColumns, Width: o.Width}
	for _, k := range ks {
		t.Append([]string{k.Spec, k.Version, k.boots(), strconv.Itoa(k.Modules)})
	}
	return t.Render(w)
}

// WriteAvailableKernels lists the Debian kernel ABIs apt offers, each
// marked when it is among cached; every line keeps to o.Width.
func WriteAvailableKernels(w io.Writer, abis []string, cached []CachedKernel, o TextOptions) error {
	have := map[string]bool{}
	for _, k := range cached {
		have[k.Spec] = true
	}
	ew := &errWriter{w: w}
	line := func(s string) {
		for _, l := range wrapHanging(s, o.Width, 2) {
			fmt.Fprintln(ew, l)
		}
	}
	line("available from apt (tailgate kernels fetch SPEC):")
	if len(abis) == 0 {
		line("  none (run apt-get update?)")
	}
	for _, abi := range abis {
		spec := "debian:" + abi
		mark := ""
		if have[spec] {
			mark = "  (cached)"
		}
		line("  " + spec + mark)
	}
	if len(abis) > 0 {
		line("aliases: debian:latest-cloud (the default), debian:6.1-cloud, debian:6.12-rt, ... name the newest ABI of their kind")
	}
	return ew.err
}
