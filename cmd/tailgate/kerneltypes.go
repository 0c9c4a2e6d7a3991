package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tailgate-ci/tailgate/bpf/interfere"
	"github.com/tailgate-ci/tailgate/internal/kerneltypes"
	"github.com/tailgate-ci/tailgate/internal/tracers"
	"github.com/tailgate-ci/tailgate/vmtest"
)

// kernelTypesFor returns the file of k's BTF cut to the types tailgate's
// BPF objects relocate against, which the guest's tracers use instead of
// decoding the kernel's whole BTF (0.35-0.4 s of each boot under TCG). It
// is made once per kernel and set of objects, from the cached kernel's
// vmlinux, and kept beside it. "" when there is nothing to cut from (an
// image given as a path, or no vmlinux) or the cut fails, which line says:
// the guest then decodes its kernel's own BTF.
func kernelTypesFor(k *vmtest.Kernel, line func(string)) string {
	if k.Dir == "" || k.Vmlinux == "" {
		return ""
	}
	objs, err := tracers.Objects()
	if err != nil {
		line("cannot cut the kernel's BTF for the guest: " + err.Error())
		return ""
	}
	names := kerneltypes.Names(objs, kerneltypes.TracepointTypedefs(interfere.OptionalTracepoints)...)
	sum := sha256.Sum256(fmt.Appendf(nil, "%d\n%s", kerneltypes.Version, strings.Join(names, "\n")))
	path := filepath.Join(k.Dir, fmt.Sprintf("kernel-types-%x.btf", sum[:6]))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	kernel, err := kerneltypes.ReadVmlinux(k.Vmlinux)
	if err != nil {
		line(fmt.Sprintf("the guest decodes its kernel's BTF itself: %s has none tailgate can read: %v", k.Vmlinux, err))
		return ""
	}
	raw, n, err := kerneltypes.Cut(kernel, names)
	if err == nil {
		err = writeKernelTypes(path, raw)
	}
	if err != nil {
		line("cannot cut the kernel's BTF for the guest: " + err.Error())
		return ""
	}
	line(fmt.Sprintf("cut the kernel's BTF to the %d types the tracers relocate against (%d KiB), kept in the kernel cache", n, len(raw)>>10))
	return path
}

// writeKernelTypes writes raw to path through a temporary file renamed
// over it, and removes the cuts of other sets of objects (other builds).
func writeKernelTypes(path string, raw []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".kernel-types-*")
	if err != nil {
		return err
	}
	_, err = f.Write(raw)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	old, _ := filepath.Glob(filepath.Join(dir, "kernel-types-*.btf"))
	for _, o := range old {
		if o != path {
			os.Remove(o)
		}
	}
	return nil
}
