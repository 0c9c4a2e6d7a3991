package kernels

import (
	"bufio"
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// treeSystemMap finds the System.map of a kernel built in a tree, image
// being the file the user named (arch/x86/boot/bzImage or vmlinux) and
// vmlinux the ELF that boots: System.map beside it or up to three
// directories above. It is taken only if the address it gives
// linux_banner holds "Linux version " in vmlinux, so that a map of another
// build is never used. "" when there is none.
func treeSystemMap(image, vmlinux string) string {
	dir := filepath.Dir(image)
	for range 4 {
		p := filepath.Join(dir, "System.map")
		if bannerAt(vmlinux, bannerAddr(p)) {
			return p
		}
		dir = filepath.Dir(dir)
	}
	return ""
}

// bannerAddr is linux_banner's address in a System.map, 0 if not there.
func bannerAddr(path string) uint64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 3 && fs[2] == "linux_banner" {
			a, _ := strconv.ParseUint(fs[0], 16, 64)
			return a
		}
	}
	return 0
}

// bannerAt reports whether the ELF kernel holds the kernel's banner at
// address addr.
func bannerAt(vmlinux string, addr uint64) bool {
	if addr == 0 {
		return false
	}
	f, err := elf.Open(vmlinux)
	if err != nil {
		return false
	}
	defer f.Close()
	want := []byte("Linux version ")
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD || addr < p.Vaddr || addr+uint64(len(want)) > p.Vaddr+p.Filesz {
			continue
		}
		got := make([]byte, len(want))
		if _, err := p.ReadAt(got, int64(addr-p.Vaddr)); err != nil {
			return false
		}
		return bytes.Equal(got, want)
	}
	return false
}
