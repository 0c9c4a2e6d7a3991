package report

import (
	"fmt"
	"io"
)

// CachedKernel is a kernel of the cache as tailgate kernels list shows it.
type CachedKernel struct {
	Spec, Version string
	Vmlinux       bool // boots the uncompressed ELF, else the bzImage
	Modules       int
}

// WriteCachedKernels lists the kernels cached in dir, one a line.
func WriteCachedKernels(w io.Writer, dir string, ks []CachedKernel) error {
	fmt.Fprintf(w, "cached in %s:\n", dir)
	if len(ks) == 0 {
		fmt.Fprintf(w, "  none\n")
	}
	for _, k := range ks {
		boot := "bzImage"
		if k.Vmlinux {
			boot = "vmlinux"
		}
		fmt.Fprintf(w, "  %-42s %-22s boots %s, %d modules\n", k.Spec, k.Version, boot, k.Modules)
	}
	return nil
}

// WriteAvailableKernels lists the Debian kernel ABIs apt offers, each
// marked when it is among cached.
func WriteAvailableKernels(w io.Writer, abis []string, cached []CachedKernel) error {
	have := map[string]bool{}
	for _, k := range cached {
		have[k.Spec] = true
	}
	fmt.Fprintf(w, "available from apt (tailgate kernels fetch SPEC):\n")
	if len(abis) == 0 {
		fmt.Fprintf(w, "  none (run apt-get update?)\n")
	}
	for _, abi := range abis {
		spec := "debian:" + abi
		mark := ""
		if have[spec] {
			mark = "  (cached)"
		}
		fmt.Fprintf(w, "  %s%s\n", spec, mark)
	}
	if len(abis) > 0 {
		fmt.Fprintf(w, "aliases: debian:latest-cloud (the default), debian:6.1-cloud, debian:6.12-rt, ... name the newest ABI of their kind\n")
	}
	return nil
}
