package vm

import (
	"bufio"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/tailgate-ci/tailgate/kernels"
)

// Paths inside the guest.
const (
	guestRequestPath = "/tailgate/request.json" // also marks a tailgate guest
	guestModuleDir   = "/tailgate/modules"
	// guestKernelTypesPath holds Machine.KernelTypes.
	guestKernelTypesPath = "/tailgate/kernel-types.btf"
)

// ErrNotStatic means the binary to run as the guest's /init needs shared
// libraries that cannot be put in the initramfs beside it.
var ErrNotStatic = errors.New("not a static binary")

// CheckStatic checks that path is an ELF executable that needs no dynamic
// loader (no PT_INTERP) and no shared library (no DT_NEEDED), so that it
// can run as /init with nothing else in the initramfs.
func CheckStatic(path string) error {
	interp, libs, err := elfNeeds(path)
	if err != nil {
		return err
	}
	if interp != "" {
		return fmt.Errorf("guest init %s: %w: it needs a dynamic loader; build with CGO_ENABLED=0", path, ErrNotStatic)
	}
	if len(libs) > 0 {
		return fmt.Errorf("guest init %s: %w: it needs %v; build with CGO_ENABLED=0", path, ErrNotStatic, libs)
	}
	return nil
}

// elfNeeds reads path's dynamic loader (PT_INTERP, "" for none) and the
// shared libraries it names (DT_NEEDED), and checks it is built for the
// guest's machine.
func elfNeeds(path string) (interp string, libs []string, err error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", nil, fmt.Errorf("guest init %s: %w", path, err)
	}
	defer f.Close()
	if f.Machine != elf.EM_X86_64 {
		return "", nil, fmt.Errorf("guest init %s: built for %v, the guest is x86-64", path, f.Machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b, err := io.ReadAll(p.Open())
			if err != nil {
				return "", nil, fmt.Errorf("guest init %s: loader: %w", path, err)
			}
			interp = strings.TrimRight(string(b), "\x00")
		}
	}
	libs, err = f.ImportedLibraries()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return "", nil, fmt.Errorf("guest init %s: %w", path, err)
	}
	return interp, libs, nil
}

// GuestFiles lists the host files the initramfs carries beside init so
// that it runs as /init, each at its own path: none for a static binary
// (CGO_ENABLED=0, as make build makes it); for one that a plain go build
// linked against the C library (the net package's resolver does that
// when a C compiler is at hand), its dynamic loader, the libraries the
// loader resolves for it here and the loader's cache, so the guest's
// loader finds the same files.
func GuestFiles(init string) ([]string, error) {
	interp, libs, err := elfNeeds(init)
	if err != nil {
		return nil, err
	}
	if interp == "" {
		if len(libs) > 0 {
			return nil, fmt.Errorf("guest init %s: %w: it needs %v but names no loader; build with CGO_ENABLED=0 (make build)", init, ErrNotStatic, libs)
		}
		return nil, nil
	}
	if !filepath.IsAbs(interp) {
		return nil, fmt.Errorf("guest init %s: %w: its loader %q is not an absolute path; build with CGO_ENABLED=0 (make build)", init, ErrNotStatic, interp)
	}
	// The loader's --list (what ldd runs) resolves the libraries as the
	// loader will, without running init.
	out, err := exec.Command(interp, "--list", init).Output()
	if err != nil {
		return nil, fmt.Errorf("guest init %s: %w: %s --list: %v; build with CGO_ENABLED=0 (make build)", init, ErrNotStatic, interp, err)
	}
	files, err := parseLoaderList(out)
	if err != nil {
		return nil, fmt.Errorf("guest init %s: %w: %v; build with CGO_ENABLED=0 (make build)", init, ErrNotStatic, err)
	}
	files = append([]string{interp}, files...)
	if _, err := os.Stat(loaderCache); err == nil {
		files = append(files, loaderCache)
	}
	return files, nil
}

// loaderCache is where glibc's loader looks libraries up first.
const loaderCache = "/etc/ld.so.cache"

// parseLoaderList reads the libraries out of a dynamic loader's --list
// output: "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)".
// Lines without "=>" are the loader itself and the vDSO.
func parseLoaderList(out []byte) ([]string, error) {
	var files []string
	for line := range strings.Lines(string(out)) {
		name, where, ok := strings.Cut(strings.TrimSpace(line), " => ")
		if !ok {
			continue
		}
		p, _, _ := strings.Cut(where, " (")
		if p == "not found" || !filepath.IsAbs(p) {
			return nil, fmt.Errorf("library %s not found", name)
		}
		files = append(files, p)
	}
	return files, nil
}

// writeInitramfs writes the guest's initramfs: init as /init, a
// /dev/console node (devtmpfs is not mounted before /init runs, and the
// kernel opens the console for it), the kernel's modules, its config as
// /boot/config-RELEASE (where tools look when there is no
// /proc/config.gz) and the request. req.Modules is set to where the
// modules are in the guest.
func writeInitramfs(w io.Writer, init string, k *kernels.Kernel, kernelTypes string, req GuestRequest) error {
	extra, err := GuestFiles(init)
	if err != nil {
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
	if err := writeHostFiles(cw, extra); err != nil {
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

// writeHostFiles writes each host file at its own path, making the
// directories above it (a symbolic link is followed: the guest gets the
// file's bytes).
func writeHostFiles(cw *CPIOWriter, files []string) error {
	made := map[string]bool{"dev": true, "proc": true, "sys": true, "tmp": true, "run": true, "tailgate": true}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("guest init: %w", err)
		}
		rel := strings.TrimPrefix(path.Clean(f), "/")
		var dirs []string
		for d := path.Dir(rel); d != "."; d = path.Dir(d) {
			dirs = append(dirs, d)
		}
		for i := len(dirs) - 1; i >= 0; i-- {
			if made[dirs[i]] {
				continue
			}
			if err := cw.Dir(dirs[i], 0o755); err != nil {
				return err
			}
			made[dirs[i]] = true
		}
		if err := cw.File(rel, 0o755, b); err != nil {
			return err
		}
	}
	return nil
}
