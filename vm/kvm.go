package vm

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/internal/safefile"
)

// KVM is what tailgate knows of KVM on this host: whether /dev/kvm opens,
// and whether a guest actually runs on it. Some hosts (nested
// virtualization without the CPU's virtualization extensions) have a
// /dev/kvm that opens and creates VMs whose vCPUs never run.
type KVM struct {
	// Opens: /dev/kvm opens read-write.
	Opens bool
	// Usable: a test guest ran to its hlt under KVM (ProbeKVM), and no VM
	// has failed to start its kernel under KVM since this boot.
	Usable bool
	// Reason says why KVM is not usable: the step that failed and its
	// error. Empty when Usable.
	Reason string
	// Took is how long the probe took.
	Took time.Duration
	// Cached: the answer was found earlier this boot, in CacheFile.
	Cached    bool
	CacheFile string
}

func (k KVM) err() error {
	if k.Usable {
		return nil
	}
	return errors.New(k.Reason)
}

// The KVM ioctls the probe uses (linux/kvm.h; _IO(KVMIO, n) is 0xAE00|n).
const (
	kvmGetAPIVersion       = 0xAE00
	kvmCreateVM            = 0xAE01
	kvmGetVCPUMmapSize     = 0xAE04
	kvmCreateVCPU          = 0xAE41
	kvmSetUserMemoryRegion = 0x4020AE46 // _IOW(KVMIO, 0x46, struct kvm_userspace_memory_region)
	kvmSetTSSAddr          = 0xAE47
	kvmRun                 = 0xAE80

	kvmAPIVersion = 12
)

// kvmExitReasons names the exit reasons a probe can meet (linux/kvm.h).
var kvmExitReasons = map[uint32]string{
	0: "unknown", 1: "exception", 2: "io", 4: "debug", 5: "hlt", 6: "mmio",
	7: "irq window open", 8: "shutdown", 9: "fail entry", 10: "intr",
	17: "internal error", 24: "system event",
}

const kvmExitHLT = 5

// The probe's guest: one page at the top of the first 4 GiB, where the
// vCPU starts as it comes out of reset: real mode, at 0xfffffff0. That is
// where QEMU's BIOS starts too. The code counts a loop down and halts; run
// again, it starts over. No register needs setting up.
const (
	probeGuestAddr = 0xfffff000
	probePageSize  = 0x1000
	opHLT          = 0xf4
	// QEMU puts the real-mode TSS here; Intel CPUs without unrestricted
	// guest support need one to run real-mode code.
	probeTSSAddr = 0xfffbd000
)

// probeIterations is the guest's loop count: tens of microseconds where
// the CPU runs the guest, tens of milliseconds where the host's KVM
// emulates each instruction (as kvm_pvm does for guests not written for
// it, and QEMU's BIOS and Linux are not).
const probeIterations = 20000

// probeSlow is the time from which a run of the loop counts as emulated:
// 100 ns an iteration, about 100 times what a CPU takes and a tenth of what
// the emulation measured here takes. A run is tried probeRuns times before
// it counts as slow, so that a preempted run is not mistaken for one.
const (
	probeSlow = 2 * time.Millisecond
	probeRuns = 3
)

// probeCode returns the guest's page: at offset 0 (IP 0xf000 in the reset
// code segment, base 0xffff0000)
//
//	start: mov ecx, n
//	loop:  dec ecx
//	       jnz loop
//	       hlt
//	       jmp start
//
// at the reset vector (IP 0xfff0) a jmp to start, and hlt everywhere else.
func probeCode(n uint32) []byte {
	page := make([]byte, probePageSize)
	for i := range page {
		page[i] = opHLT
	}
	copy(page, []byte{
		0x66, 0xb9, byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24), // mov ecx, n
		0x66, 0x49, // dec ecx
		0x75, 0xfc, // jnz -4
		opHLT,
		0xeb, 0xf3, // jmp -13
	})
	copy(page[0xff0:], []byte{0xe9, 0x0d, 0xf0}) // jmp near 0xf000
	return page
}

// kvmUserspaceMemoryRegion is struct kvm_userspace_memory_region.
type kvmUserspaceMemoryRegion struct {
	Slot          uint32
	Flags         uint32
	GuestPhysAddr uint64
	MemorySize    uint64
	UserspaceAddr uint64
}

// probeTimeout bounds a probe whose KVM_RUN does not return.
const probeTimeout = 500 * time.Millisecond

// ProbeKVM tests KVM now, without the cache: it opens /dev/kvm, creates a
// VM with one page of memory holding a short loop at the reset vector and
// one vCPU in real mode, runs it, and wants KVM_RUN to come back with the
// HLT exit at the loop's end, at the speed of a CPU running guest code.
// It takes a few milliseconds where KVM works and at most probeTimeout
// where it does not.
func ProbeKVM() KVM {
	t0 := time.Now()
	k := probeKVM()
	k.Took = time.Since(t0)
	return k
}

func probeKVM() KVM {
	fd, err := unix.Open("/dev/kvm", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return KVM{Reason: fmt.Sprintf("open /dev/kvm: %v", err)}
	}
	defer unix.Close(fd)
	k := KVM{Opens: true}
	fail := func(step string, err error) KVM {
		k.Reason = fmt.Sprintf("%s: %v", step, err)
		return k
	}
	v, err := kvmIoctl(fd, kvmGetAPIVersion, 0)
	if err != nil {
		return fail("KVM_GET_API_VERSION", err)
	}
	if v != kvmAPIVersion {
		return fail("KVM_GET_API_VERSION", fmt.Errorf("version %d, want %d", v, kvmAPIVersion))
	}
	vm, err := kvmIoctl(fd, kvmCreateVM, 0)
	if err != nil {
		return fail("KVM_CREATE_VM", err)
	}
	p := &kvmProbe{kvm: fd, vm: vm, vcpu: -1}
	if err := p.setUp(); err != nil {
		p.close()
		k.Reason = err.Error()
		return k
	}
	// From here on the goroutine running KVM_RUN closes the VM: a hung
	// KVM_RUN may still use it.
	if err := p.runTimeout(probeTimeout); err != nil {
		k.Reason = err.Error()
		return k
	}
	k.Usable = true
	return k
}

// kvmProbe is the probe's VM.
type kvmProbe struct {
	kvm, vm, vcpu int
	mem, run      []byte
}

func (p *kvmProbe) setUp() error {
	if _, err := kvmIoctl(p.vm, kvmSetTSSAddr, probeTSSAddr); err != nil {
		return fmt.Errorf("KVM_SET_TSS_ADDR: %w", err)
	}
	mem, err := unix.Mmap(-1, 0, probePageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_ANONYMOUS)
	if err != nil {
		return fmt.Errorf("guest memory: %w", err)
	}
	p.mem = mem
	copy(mem, probeCode(probeIterations))
	region := kvmUserspaceMemoryRegion{
		GuestPhysAddr: probeGuestAddr,
		MemorySize:    probePageSize,
		UserspaceAddr: uint64(uintptr(unsafe.Pointer(&mem[0]))),
	}
	if _, err := kvmIoctl(p.vm, kvmSetUserMemoryRegion, uintptr(unsafe.Pointer(&region))); err != nil {
		return fmt.Errorf("KVM_SET_USER_MEMORY_REGION: %w", err)
	}
	vcpu, err := kvmIoctl(p.vm, kvmCreateVCPU, 0)
	if err != nil {
		return fmt.Errorf("KVM_CREATE_VCPU: %w", err)
	}
	p.vcpu = vcpu
	size, err := kvmIoctl(p.kvm, kvmGetVCPUMmapSize, 0)
	if err != nil {
		return fmt.Errorf("KVM_GET_VCPU_MMAP_SIZE: %w", err)
	}
	if size < 40 {
		return fmt.Errorf("KVM_GET_VCPU_MMAP_SIZE: %d bytes, too small for struct kvm_run", size)
	}
	run, err := unix.Mmap(vcpu, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("mmap kvm_run: %w", err)
	}
	p.run = run
	return nil
}

// close releases the VM; the /dev/kvm descriptor is the caller's.
func (p *kvmProbe) close() {
	if p.run != nil {
		unix.Munmap(p.run)
	}
	if p.vcpu >= 0 {
		unix.Close(p.vcpu)
	}
	unix.Close(p.vm)
	if p.mem != nil {
		unix.Munmap(p.mem)
	}
}

// runTimeout runs the guest's loop, for at most d. KVM_RUN runs on a
// thread of its own so that a signal can interrupt it; a KVM_RUN that even
// the signal does not end is left behind with its VM.
func (p *kvmProbe) runTimeout(d time.Duration) error {
	done := make(chan error, 1)
	tids := make(chan int, 1)
	var stop atomic.Bool
	go func() {
		// The thread ends with the goroutine: it may have a signal
		// pending that no one else should see.
		runtime.LockOSThread()
		tids <- unix.Gettid()
		err := p.runLoops(&stop)
		p.close()
		done <- err
	}()
	tid := <-tids
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
	}
	stop.Store(true)
	// SIGURG is the Go runtime's own preemption signal: harmless to it,
	// and it makes KVM_RUN return EINTR.
	for range 10 {
		unix.Tgkill(os.Getpid(), tid, unix.SIGURG)
		select {
		case <-done:
			return fmt.Errorf("KVM_RUN: the test guest did not reach its hlt in %v%s", d, kvmModules())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return fmt.Errorf("KVM_RUN: did not return in %v, nor when interrupted%s", d, kvmModules())
}

// runLoops runs the guest's loop up to probeRuns times, until a run is as
// fast as a CPU running it.
func (p *kvmProbe) runLoops(stop *atomic.Bool) error {
	fastest := time.Duration(math.MaxInt64)
	for range probeRuns {
		t0 := time.Now()
		if err := p.runOnce(stop); err != nil {
			return err
		}
		d := time.Since(t0)
		if d < probeSlow {
			return nil
		}
		fastest = min(fastest, d)
	}
	return fmt.Errorf("KVM_RUN: a test loop of %d iterations took %v, %v each where a CPU takes about 1ns: the host emulates guest code%s",
		probeIterations, fastest.Round(100*time.Microsecond), (fastest / probeIterations).Round(10*time.Nanosecond), kvmModules())
}

func (p *kvmProbe) runOnce(stop *atomic.Bool) error {
	for {
		_, err := kvmIoctl(p.vcpu, kvmRun, 0)
		if err == unix.EINTR && !stop.Load() {
			continue
		}
		if err != nil {
			return fmt.Errorf("KVM_RUN: %w", err)
		}
		reason := *(*uint32)(unsafe.Pointer(&p.run[8]))
		if reason == kvmExitHLT {
			return nil
		}
		name := kvmExitReasons[reason]
		if name == "" {
			name = "?"
		}
		detail := ""
		switch reason {
		case 9: // fail entry: hardware_entry_failure_reason
			detail = fmt.Sprintf(", hardware entry failure reason %#x", *(*uint64)(unsafe.Pointer(&p.run[32])))
		case 17: // internal error: suberror
			detail = fmt.Sprintf(", suberror %d", *(*uint32)(unsafe.Pointer(&p.run[32])))
		}
		return fmt.Errorf("KVM_RUN: exit reason %d (%s%s), want %d (hlt)", reason, name, detail, kvmExitHLT)
	}
}

// kvmModules names the KVM implementations loaded, for messages: "
// (kvm_pvm)".
func kvmModules() string {
	var mods []string
	for _, m := range []string{"kvm_intel", "kvm_amd", "kvm_pvm"} {
		if _, err := os.Stat("/sys/module/" + m); err == nil {
			mods = append(mods, m)
		}
	}
	if len(mods) == 0 {
		return ""
	}
	return " (" + strings.Join(mods, ", ") + ")"
}

func kvmIoctl(fd int, req, arg uintptr) (int, error) {
	for {
		r, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, arg)
		if errno == unix.EINTR && req != kvmRun {
			continue
		}
		if errno != 0 {
			return 0, errno
		}
		return int(r), nil
	}
}

// kvmCacheEntry is the cache file's content.
type kvmCacheEntry struct {
	BootID string        `json:"boot_id"`
	Usable bool          `json:"usable"`
	Reason string        `json:"reason,omitempty"`
	Took   time.Duration `json:"took_ns"`
}

// kvmCachePath is the file the answer is kept in for the boot.
func kvmCachePath() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "tailgate", "kvm.json"), nil
}

func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// CheckKVM returns what is known of KVM this boot: /dev/kvm is opened every
// time (its permissions may change, as a CI step granting access does), and
// the answer of ProbeKVM is kept for the boot in a cache file keyed by the
// boot id, so that only the first run of a boot pays for the probe.
func CheckKVM() KVM {
	fd, err := unix.Open("/dev/kvm", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return KVM{Reason: fmt.Sprintf("open /dev/kvm: %v", err)}
	}
	unix.Close(fd)
	path, perr := kvmCachePath()
	id := bootID()
	if perr == nil && id != "" {
		if e, ok := readKVMCache(path, id); ok {
			return KVM{Opens: true, Usable: e.Usable, Reason: e.Reason, Took: e.Took, Cached: true, CacheFile: path}
		}
	}
	k := ProbeKVM()
	if k.Opens && perr == nil && id != "" {
		// A cache that cannot be written costs the next run a probe.
		if writeKVMCache(path, kvmCacheEntry{BootID: id, Usable: k.Usable, Reason: k.Reason, Took: k.Took}) == nil {
			k.CacheFile = path
		}
	}
	return k
}

// recordKVMBroken remembers for the boot that KVM failed to start a VM's
// kernel although the probe passed, so that later runs go to TCG at once.
func recordKVMBroken(reason string) {
	path, err := kvmCachePath()
	id := bootID()
	if err != nil || id == "" {
		return
	}
	writeKVMCache(path, kvmCacheEntry{BootID: id, Reason: "a VM's kernel did not start under KVM: " + reason})
}

func readKVMCache(path, id string) (kvmCacheEntry, bool) {
	var e kvmCacheEntry
	f, err := safefile.OpenNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return e, false
	}
	defer f.Close()
	b := make([]byte, 4<<10)
	n, _ := f.Read(b)
	if json.Unmarshal(b[:n], &e) != nil || e.BootID != id || !e.Usable && e.Reason == "" {
		return e, false
	}
	return e, true
}

// writeKVMCache replaces the cache file atomically: a temporary file
// (O_EXCL) renamed over it, which replaces a planted symlink rather than
// writing through it.
func writeKVMCache(path string, e kvmCacheEntry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".kvm.json.tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // no-op after the rename
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	return err
}
