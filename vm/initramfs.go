package vm

import (
	"bufio"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/tailgate-ci/tailgate/kernels"
)

// Paths inside the guest.
const (
	guestRequestPath = "/tailgate/request.json" // also marks a tailgate guest
	guestModuleDir   = "/tailgate/modules"
	// guestKernelTypesPath holds Machine.KernelTypes.
	guestKernelTypesPath = "/tailgate/kernel-types.btf"
)

// ErrNotStatic means the binary to run as the guest's /init needs a
// dynamic loader or shared libraries, which the initramfs does not have.
var ErrNotStatic = errors.New("not a static binary")

// CheckStatic checks that path is an ELF executable that needs no dynamic
// loader (no PT_INTERP) and no shared library (no DT_NEEDED), so that it
// can run as /init with nothing else in the initramfs.
func CheckStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("guest init %s: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("guest init %s: %w: it needs a dynamic loader; build with CGO_ENABLED=0", path, ErrNotStatic)
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return fmt.Errorf("guest init %s: %w", path, err)
	}
	if len(libs) > 0 {
		return fmt.Errorf("guest init %s: %w: it needs %v; build with CGO_ENABLED=0", path, ErrNotStatic, libs)
	}
	if f.Machine != elf.EM_X86_64 {
		return fmt.Errorf("guest init %s: built for %v, the guest is x86-64", path, f.Machine)
	}
	return nil
}

// writeInitramfs writes the guest's initramfs: init as /init, a
// /dev/console node (devtmpfs is not mounted before /init runs, and the
// kernel opens the console for it), the kernel's modules, its config as
// /boot/config-RELEASE (where tools look when there is no
// /proc/config.gz) and the request. req.Modules is set to where the
// modules are in the guest.
func writeInitramfs(w io.Writer, init string, k *kernels.Kernel, kernelTypes string, req GuestRequest) error {
	if err := CheckStatic(init); err != nil {
		return err
	}
	bin, err := os.ReadFile(init)
	if err != nil {
		return fmt.Errorf("guest init: %w", err)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := NewCPIOWriter(bw)
	for _, d := range []string{"dev", "proc", "sys", "tmp", "run", "tailgate", guestModuleDir[1:]} {
		if err := cw.Dir(d, 0o755); err != nil {
			return err
		}
	}
	if err := cw.CharDev("dev/console", 0o600, 5, 1); err != nil {
		return err
	}
	if err := cw.File("init", 0o755, bin); err != nil {
		return err
	}
	if k.Config != "" && k.Release != "" {
		b, err := os.ReadFile(k.Config)
		if err != nil {
			return fmt.Errorf("kernel config: %w", err)
		}
		if err := cw.Dir("boot", 0o755); err != nil {
			return err
		}
		if err := cw.File("boot/config-"+k.Release, 0o644, b); err != nil {
			return err
		}
	}
	req.Modules = nil
	for _, m := range k.Modules {
		if kernels.ModuleName(m) == kernels.ScratchModule && req.ScratchSerial == "" {
			continue // no scratch disk to drive
		}
		b, err := os.ReadFile(m)
		if err != nil {
			return fmt.Errorf("module: %w", err)
		}
		p := path.Join(guestModuleDir, filepath.Base(m))
		if err := cw.File(p, 0o644, b); err != nil {
			return err
		}
		req.Modules = append(req.Modules, p)
	}
	req.KernelTypes = ""
	if kernelTypes != "" {
		b, err := os.ReadFile(kernelTypes)
		if err != nil {
			return fmt.Errorf("kernel types: %w", err)
		}
		if err := cw.File(guestKernelTypesPath[1:], 0o644, b); err != nil {
			return err
		}
		req.KernelTypes = guestKernelTypesPath
	}
	rb, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("guest request: %w", err)
	}
	if err := cw.File(guestRequestPath, 0o644, rb); err != nil {
		return err
	}
	if err := cw.Close(); err != nil {
		return err
	}
	return bw.Flush()
}
