package engine

import (
	"time"

	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/tailgate-ci/tailgate/bpf/tracers"
	"github.com/tailgate-ci/tailgate/internal/kerneltypes"
	"github.com/tailgate-ci/tailgate/kernels"
)

// kernelTypesFor returns the file of k's BTF cut to the types tailgate's
// BPF objects relocate against, which the guest's tracers use instead of
// decoding the kernel's whole BTF (0.35-0.4 s of each boot under TCG), and
// what removes it when it is not kept. Every kernel with a vmlinux gets
// one, so that every VM target of a comparison attaches the same variants
// (raw_tp): a cached kernel's and a bzImage's (whose vmlinux the cache
// extracted) is made once per set of objects and kept beside the vmlinux;
// an ELF kernel given as a path gets one for this run, in a temporary
// file. "" when there is nothing to cut from (a bzImage booted as it is)
// or the cut fails, which line says: the guest then decodes its kernel's
// own BTF.
func kernelTypesFor(k *kernels.Kernel, line func(string)) (string, func()) {
	none := func() {}
	if k.Vmlinux == "" {
		return "", none
	}
	names, err := objectTypeNames()
	if err != nil {
		line("cannot cut the kernel's BTF for the guest: " + err.Error())
		return "", none
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%d\n%s", kerneltypes.Version, strings.Join(names, "\n")))
	keep := k.Dir
	if keep == "" && k.Vmlinux != k.Image {
		keep = filepath.Dir(k.Vmlinux) // the cache's directory of a bzImage
	}
	path := ""
	if keep != "" {
		path = filepath.Join(keep, fmt.Sprintf("kernel-types-%x.btf", sum[:6]))
		if _, err := os.Stat(path); err == nil {
			// In use: no other build's writeKernelTypes takes it for stale.
			now := time.Now()
			os.Chtimes(path, now, now)
			return path, none
		}
	}
	kernel, err := kerneltypes.ReadVmlinux(k.Vmlinux)
	if err != nil {
		line(fmt.Sprintf("the guest decodes its kernel's BTF itself: %s has none tailgate can read: %v", k.Vmlinux, err))
		return "", none
	}
	raw, n, err := kerneltypes.Cut(kernel, names)
	done := none
	switch {
	case err != nil:
	case path != "":
		err = writeKernelTypes(path, raw)
	default:
		path, err = writeTempKernelTypes(raw)
		done = func() { os.Remove(path) }
	}
	if err != nil {
		line("cannot cut the kernel's BTF for the guest: " + err.Error())
		return "", none
	}
	if keep != "" {
		line(fmt.Sprintf("cut the kernel's BTF to the %d types the tracers relocate against (%d KiB), kept in the kernel cache", n, len(raw)>>10))
	}
	return path, done
}

// objectTypeNames are the type names of this build's BPF objects that a
// cut keeps (kerneltypes.Names), found once per process: reading every
// object takes 11-14 ms, and a gate calls kernelTypesFor for each target
// in every round.
var objectTypeNames = sync.OnceValues(func() ([]string, error) {
	objs, err := tracers.Objects()
	if err != nil {
		return nil, err
	}
	return kerneltypes.Names(objs, kerneltypes.TracepointTypedefs(tracers.OptionalTracepoints())...), nil
})

// writeTempKernelTypes writes raw to a temporary file of its own.
func writeTempKernelTypes(raw []byte) (string, error) {
	f, err := os.CreateTemp("", "tailgate-kernel-types-*.btf")
	if err != nil {
		return "", err
	}
	_, err = f.Write(raw)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// staleKernelTypes is how long a cut of another set of objects (another
// build) stays beside a kernel unused: a build that runs beside this one
// on the same cache is still reading its own, once per boot.
const staleKernelTypes = 24 * time.Hour

// writeKernelTypes writes raw to path through a temporary file renamed
// over it, and removes the cuts of other sets of objects (other builds)
// left unused for staleKernelTypes.
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
		if st, err := os.Stat(o); err == nil && o != path && time.Since(st.ModTime()) > staleKernelTypes {
			os.Remove(o)
		}
	}
	return nil
}
