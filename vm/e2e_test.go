package vm

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/testenv"
	"github.com/tailgate-ci/tailgate/kernels"
)

// The end-to-end tests boot a real Debian cloud kernel (fetched with apt
// into the user cache, so later runs reuse it) with the test guest as
// /init. Each boot takes 2-4 s under TCG.

// needQEMU skips with -short, and without what booting a Debian guest
// needs (testenv.DebianGuest; under TAILGATE_CI_STRICT a missing QEMU fails).
func needQEMU(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("boots VMs; skipped with -short")
	}
	testenv.DebianGuest(t)
}

var (
	e2eKernelOnce sync.Once
	e2eKernel     *kernels.Kernel
	e2eKernelErr  error
)

// testKernel fetches the newest Debian 6.1 cloud kernel, once.
func testKernel(t *testing.T) *kernels.Kernel {
	t.Helper()
	needQEMU(t)
	e2eKernelOnce.Do(func() {
		c, err := kernels.DefaultCache()
		if err != nil {
			e2eKernelErr = err
			return
		}
		c.Progress = func(s string) { t.Log(s) }
		e2eKernel, e2eKernelErr = c.Resolve(context.Background(), "debian:6.1-cloud")
	})
	if e2eKernelErr != nil {
		t.Fatal(e2eKernelErr)
	}
	return e2eKernel
}

// bootTest runs the test guest in mode (see testdata/guest) and checks that
// no QEMU process outlives Run.
func bootTest(t *testing.T, ctx context.Context, mode string, deadline time.Duration, progress func(string)) (*VMError, error) {
	t.Helper()
	k := testKernel(t)
	return bootInit(t, ctx, k, buildStaticBinary(t), mode, deadline, progress)
}

// bootInit is bootTest with guest as the guest's /init.
func bootInit(t *testing.T, ctx context.Context, k *kernels.Kernel, guest, mode string, deadline time.Duration, progress func(string)) (*VMError, error) {
	t.Helper()
	// QEMU's command line names Run's work directory, made in TMPDIR: a
	// directory of our own tells our QEMU from anyone else's.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	vm := Machine{Name: "e2e", Kernel: k, Init: guest, Setup: mustSetup(t, Settings{VCPUs: 2, Clock: ClockReal, MemMiB: 512}), Cmdline: "tgtest=" + mode, Deadline: deadline}
	if progress == nil {
		progress = func(string) {}
	}
	res, err := Run(ctx, vm, GuestRequest{}, func(s string) { t.Log(s); progress(s) })
	if pids := qemuProcesses(t, tmp); len(pids) > 0 {
		t.Errorf("QEMU still running after Run returned: pids %v", pids)
	}
	if mode == "" {
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.TrimPrefix(k.Spec, "debian:"); res.Environment.KernelRelease != want {
			t.Errorf("guest kernel release %q, want %q", res.Environment.KernelRelease, want)
		}
		tg := res.Target
		if tg.Name != "e2e" || tg.Kind != "vm" || tg.Kernel != k.Spec || tg.VCPUs != 2 || tg.MemMiB != 512 || tg.Cmdline != "tgtest=" || (tg.Accel != "kvm" && tg.Accel != "tcg") {
			t.Errorf("target = %+v", tg)
		}
		return nil, nil
	}
	var ve *VMError
	if !errors.As(err, &ve) {
		return nil, err
	}
	if ve.ConsoleLog == "" {
		t.Error("no console log named")
	} else if b, rerr := os.ReadFile(ve.ConsoleLog); rerr != nil || !strings.Contains(string(b), "tailgate> ") {
		t.Errorf("console log %s: %v, %d bytes", ve.ConsoleLog, rerr, len(b))
	} else {
		os.Remove(ve.ConsoleLog)
	}
	return ve, err
}

// qemuProcesses lists QEMU processes that are our children or whose command
// line mentions dir.
func qemuProcesses(t *testing.T, dir string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if !strings.Contains(string(cmdline), "qemu") {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		ppid := -1
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 {
			if f := strings.Fields(string(stat[i+1:])); len(f) > 1 {
				ppid, _ = strconv.Atoi(f[1])
			}
		}
		if ppid == os.Getpid() || strings.Contains(string(cmdline), dir) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestE2EBoot(t *testing.T) {
	k := testKernel(t)
	if k.Vmlinux == "" {
		t.Error("no vmlinux extracted from " + k.Image)
	}
	// 6.1 cloud kernels have the virtio stack as modules.
	names := map[string]int{}
	for i, m := range k.Modules {
		names[kernels.ModuleName(m)] = i + 1
	}
	for _, pair := range [][2]string{{"virtio_ring", "virtio"}, {"virtio", "virtio_pci"}, {"virtio", "virtio_console"}} {
		if names[pair[0]] == 0 || names[pair[1]] == 0 || names[pair[0]] > names[pair[1]] {
			t.Errorf("modules %v: want %s before %s", k.Modules, pair[0], pair[1])
		}
	}
	bootTest(t, context.Background(), "", time.Minute, nil)
}

// A plain go build with a C compiler at hand links the test guest (it
// imports net) against the C library; such a binary boots too, its loader
// and libraries carried beside it.
func TestE2EDynamicInit(t *testing.T) {
	k := testKernel(t)
	testenv.Need(t, testenv.Tool("gcc", "Debian: gcc; a plain go build links against the C library only with one"))
	guest := filepath.Join(t.TempDir(), "guest")
	cmd := exec.Command("go", "build", "-o", guest, "./testdata/guest")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v: %s", err, out)
	}
	if err := CheckStatic(guest); !errors.Is(err, ErrNotStatic) {
		t.Fatalf("CheckStatic(cgo build) = %v, want ErrNotStatic", err)
	}
	files, err := GuestFiles(guest)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 || !slices.ContainsFunc(files, func(f string) bool { return strings.Contains(filepath.Base(f), "libc.so") }) {
		t.Errorf("GuestFiles = %v, want the loader and libc", files)
	}
	bootInit(t, context.Background(), k, guest, "", time.Minute, nil)
}

func TestE2EGuestPanic(t *testing.T) {
	for _, tc := range []struct{ mode, text string }{
		{"panic", "sysrq triggered crash"},
		{"exit", "Attempted to kill init"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			ve, err := bootTest(t, context.Background(), tc.mode, time.Minute, nil)
			if !errors.Is(err, ErrGuestPanic) || ve == nil {
				t.Fatalf("err = %v, want ErrGuestPanic", err)
			}
			if len(ve.Lines) == 0 || !strings.Contains(ve.Lines[0], tc.text) || !strings.Contains(err.Error(), tc.text) {
				t.Errorf("error does not show %q: %v", tc.text, err)
			}
		})
	}
}

func TestE2EDeadline(t *testing.T) {
	t0 := time.Now()
	ve, err := bootTest(t, context.Background(), "sleep", 8*time.Second, nil)
	if !errors.Is(err, ErrDeadline) || ve == nil {
		t.Fatalf("err = %v, want ErrDeadline", err)
	}
	if d := time.Since(t0); d > 15*time.Second {
		t.Errorf("Run took %v with an 8s deadline", d)
	}
}

func TestE2ECancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	_, err := bootTest(t, ctx, "sleep", time.Minute, func(s string) {
		if strings.Contains(s, "test guest mode") {
			once.Do(cancel) // as SIGINT would
		}
	})
	if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %q, want one line wrapping context.Canceled", err)
	}
}

func TestE2EGuestError(t *testing.T) {
	for _, tc := range []struct{ mode, want string }{
		{"error", "the workload failed on purpose"},
		{"gopanic", "guest panic: the workload panicked on purpose"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			_, err := bootTest(t, context.Background(), tc.mode, time.Minute, nil)
			var ge *GuestError
			if !errors.As(err, &ge) || !strings.HasPrefix(ge.Msg, tc.want) {
				t.Fatalf("err = %v, want the guest's error %q", err, tc.want)
			}
		})
	}
}

func TestE2EUnknownKernel(t *testing.T) {
	needQEMU(t)
	c := &kernels.Cache{Dir: t.TempDir()}
	_, err := c.Resolve(context.Background(), "debian:6.1.0-9999-cloud-amd64")
	if !errors.Is(err, kernels.ErrUnknown) || !strings.Contains(err.Error(), "debian:6.1.0-9999-cloud-amd64") || strings.Contains(err.Error(), "\n") {
		t.Errorf("err = %v, want one line naming the spec", err)
	}
	if ents, _ := os.ReadDir(c.Dir); len(ents) != 0 {
		t.Errorf("cache has leftovers: %v", ents)
	}
}

// TestMain doubles as the helper process of TestE2EParentKilled.
func TestMain(m *testing.M) {
	if os.Getenv("VMTEST_HELPER_KERNEL") != "" {
		helperRunVM()
		return
	}
	os.Exit(m.Run())
}

// helperRunVM boots a sleeping guest and prints its progress; the test
// kills this process while the guest sleeps.
func helperRunVM() {
	c, _ := kernels.DefaultCache()
	k, err := c.Resolve(context.Background(), os.Getenv("VMTEST_HELPER_KERNEL"))
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	setup, err := Settings{Clock: ClockReal, MemMiB: 512}.Resolve()
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	vm := Machine{Kernel: k, Init: os.Getenv("VMTEST_HELPER_INIT"), Setup: setup, Cmdline: "tgtest=sleep", Deadline: time.Minute}
	_, err = Run(context.Background(), vm, GuestRequest{}, func(s string) { fmt.Println(s) })
	fmt.Println("error:", err)
	os.Exit(1)
}

// TestE2EParentKilled kills the process running the VM without warning:
// QEMU must die with it, and the next VM run removes the run directory it
// left.
func TestE2EParentKilled(t *testing.T) {
	k := testKernel(t)
	tmp := t.TempDir()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "VMTEST_HELPER_KERNEL="+k.Spec, "VMTEST_HELPER_INIT="+buildStaticBinary(t))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		t.Log("helper: " + sc.Text())
		if strings.Contains(sc.Text(), "test guest mode sleep") {
			break
		}
		if strings.HasPrefix(sc.Text(), "error:") {
			t.Fatal("helper failed")
		}
	}
	if pids := qemuProcesses(t, tmp); len(pids) != 1 {
		t.Fatalf("want the helper's QEMU running, found pids %v", pids)
	}
	cmd.Process.Kill()
	cmd.Wait()
	for i := 0; ; i++ {
		pids := qemuProcesses(t, tmp)
		if len(pids) == 0 {
			break
		}
		if i == 50 {
			t.Fatalf("QEMU %v outlived its killed parent", pids)
		}
		time.Sleep(100 * time.Millisecond)
	}

	left := runDirs(t, tmp)
	if len(left) != 1 {
		t.Fatalf("run directories after the kill: %v, want the killed run's", left)
	}
	if b, err := os.ReadFile(filepath.Join(left[0], pidFile)); err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(cmd.Process.Pid) {
		t.Errorf("pid file of %s: %q, %v; want the helper's pid %d", left[0], b, err, cmd.Process.Pid)
	}
	t.Setenv("TMPDIR", tmp)
	next := fakeQEMURun(t, "next", "")
	if _, err := os.Lstat(left[0]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the next run did not remove %s: %v", left[0], err)
	}
	if dirs := runDirs(t, tmp); len(dirs) != 1 || dirs[0] != filepath.Dir(next.ConsoleLog) {
		t.Errorf("run directories after the next run: %v, want only its kept console log's", dirs)
	}
}

// TestE2EKVMFallback: a Setup resolved to KVM (clock auto: real time)
// whose KVM does not start the kernel (a QEMU that refuses -accel kvm)
// boots again with TCG, in real time with the vCPUs planned for, tells
// FellBack, and the Result says so.
func TestE2EKVMFallback(t *testing.T) {
	k := testKernel(t)
	guest := buildStaticBinary(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	qemu := filepath.Join(tmp, "qemu")
	script := "#!/bin/sh\nfor a; do [ \"$a\" = kvm ] && { echo 'failed to initialize kvm: refused by the test' >&2; exit 1; }; done\nexec qemu-system-x86_64 \"$@\"\n"
	if err := os.WriteFile(qemu, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	kvm := Setup{Asked: Settings{Clock: ClockAuto}, Accel: "kvm", Why: "as if KVM ran a test guest", Clock: RealTime, VCPUs: 1, MemMiB: 512}
	var fell []Setup
	m := Machine{Name: "e2e", Kernel: k, Init: guest, QEMU: qemu, Setup: kvm, FellBack: func(s Setup) { fell = append(fell, s) }, Cmdline: "tgtest=", Deadline: time.Minute}
	res, err := Run(context.Background(), m, GuestRequest{}, func(s string) { t.Log(s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(fell) != 1 || fell[0].Accel != "tcg" || fell[0].Clock != RealTime || fell[0].VCPUs != 1 {
		t.Errorf("FellBack told %+v; want once, TCG in real time with 1 vCPU", fell)
	}
	if tg := res.Target; tg.Accel != "tcg" || tg.Clock != ClockReal || tg.VCPUs != 1 || tg.IcountShift != nil {
		t.Errorf("target = %+v; want TCG in real time", tg)
	}
}

// TestE2EPhases boots the test guest's loop in virtual time with snapshots:
// layout seed 7 once, its state saved at the checkpoint, and its trial run
// with phase seed 1 in the booted QEMU and with phase seed 2 in a QEMU
// that restores the state. Another boot of layout 7 runs phase seed 2 in
// the booted QEMU. The two phases start the loop at different guest
// times; the restored trial of phase 2 is the booted one, bucket for
// bucket. No QEMU and no saved state outlive the runs.
func TestE2EPhases(t *testing.T) {
	k := testKernel(t)
	guest := buildStaticBinary(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	m := Machine{Name: "ph", Kernel: k, Init: guest, Setup: mustSetup(t, Settings{Clock: ClockVirtual, MemMiB: 512, Phases: 2}), Seed: 7, Cmdline: "tgtest=loop", Deadline: 3 * time.Minute}
	var mu sync.Mutex
	var starts []string
	progress := func(s string) {
		t.Log(s)
		if at, ok := strings.CutPrefix(s, "loop starts at "); ok {
			mu.Lock()
			starts = append(starts, at)
			mu.Unlock()
		}
	}
	ctx := context.Background()
	two, err := RunPhases(ctx, m, GuestRequest{}, []uint64{1, 2}, progress)
	if err != nil {
		t.Fatal(err)
	}
	booted, err := RunPhases(ctx, m, GuestRequest{}, []uint64{2}, progress)
	if err != nil {
		t.Fatal(err)
	}
	if pids := qemuProcesses(t, tmp); len(pids) > 0 {
		t.Errorf("QEMU still running after RunPhases returned: pids %v", pids)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, runDirPrefix+"*")); len(left) > 0 {
		t.Errorf("run directories left: %v", left)
	}
	if len(two) != 2 || len(booted) != 1 || len(starts) != 3 {
		t.Fatalf("%d and %d Results, %d loop starts; want 2, 1 and 3", len(two), len(booted), len(starts))
	}
	trial := func(r *result.Result) result.Trial {
		s := r.Find("loop")
		if s == nil || s.Metrics["getppid"] == nil || len(s.Metrics["getppid"].Trials) != 1 {
			t.Fatalf("no trial of getppid in %+v", r)
		}
		return s.Metrics["getppid"].Trials[0]
	}
	p1, p2, p2boot := trial(two[0]), trial(two[1]), trial(booted[0])
	for i, tr := range []result.Trial{p1, p2, p2boot} {
		if want := []uint64{1, 2, 2}[i]; tr.Seed != 7 || tr.PhaseSeed != want {
			t.Errorf("trial %d: layout seed %d, phase seed %d; want 7 and %d", i+1, tr.Seed, tr.PhaseSeed, want)
		}
	}
	t.Logf("loop starts at %s (phase 1), %s (phase 2, restored), %s (phase 2, booted)", starts[0], starts[1], starts[2])
	t.Logf("phase 1: %d calls, p99 %.0f ns; phase 2 restored: %d calls, p99 %.0f ns; booted: %d calls, p99 %.0f ns", p1.Ops, p1.Summary.P99, p2.Ops, p2.Summary.P99, p2boot.Ops, p2boot.Summary.P99)
	if starts[0] == starts[1] {
		t.Errorf("phases 1 and 2 start the loop at the same guest time, %s", starts[0])
	}
	if starts[1] != starts[2] || p2.Ops != p2boot.Ops || p2.Summary != p2boot.Summary || !slices.Equal(p2.Histogram.Counts(), p2boot.Histogram.Counts()) {
		t.Errorf("phase 2 restored differs from phase 2 booted: starts %s and %s, %d and %d calls, %+v and %+v", starts[1], starts[2], p2.Ops, p2boot.Ops, p2.Summary, p2boot.Summary)
	}
}
