//go:build linux && amd64

package scenarios

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/testenv"
)

// loopsBackedIn returns the loop devices bound to a file in dir, as
// /sys/block/loop*/loop/backing_file shows them.
func loopsBackedIn(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob("/sys/block/loop*/loop/backing_file")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err == nil && strings.HasPrefix(strings.TrimSpace(string(b)), dir+"/") {
			out = append(out, filepath.Base(filepath.Dir(filepath.Dir(p)))+": "+strings.TrimSpace(string(b)))
		}
	}
	return out
}

// checkNothingLeft fails t unless, within a few seconds, no loop device is
// bound to a file in dir and dir is empty.
func checkNothingLeft(t *testing.T, dir, after string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		loops := loopsBackedIn(t, dir)
		es, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(loops) == 0 && len(es) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: loop devices %v still bound, %d entries in %s", after, loops, len(es), dir)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFsyncScratchLoop: with device scratch on the host the fsync kind
// writes a loop device of its own, one region per thread with O_DIRECT;
// the Stats say which device; after Close no loop device is bound to its
// backing file, which never had a name in dir.
func TestFsyncScratchLoop(t *testing.T) {
	testenv.Need(t, testenv.LoopDevices)
	dir := t.TempDir()
	r, err := NewWorkload(Workload{Kind: "fsync", Threads: 2, Params: &Fsync{Size: 8192, Dir: dir, Device: FsyncDeviceScratch}})
	if err != nil {
		t.Fatal(err)
	}
	loops := loopsBackedIn(t, dir)
	if len(loops) != 1 {
		t.Errorf("loop devices bound to a file in %s: %v, want one", dir, loops)
	}
	if es, _ := os.ReadDir(dir); len(es) != 0 {
		t.Errorf("%s holds %d entries while the device is set up; the backing file should have no name", dir, len(es))
	}
	for range 2 {
		st := runFor(t, r, 100*time.Millisecond)
		if st.Ops == 0 || st.Syscalls["fdatasync"] != st.Ops || st.Syscalls["pwrite64"] != st.Ops {
			t.Errorf("ops %d, syscalls %v: want an fdatasync and a pwrite64 per op", st.Ops, st.Syscalls)
		}
		d := st.Device
		if d == nil || d.Kind != result.DeviceLoop || !strings.HasPrefix(d.Name, "loop") || d.SizeBytes != 2*8192 {
			t.Fatalf("Stats.Device = %+v, want a loop device of %d bytes", d, 2*8192)
		}
		if !strings.HasPrefix(loops[0], d.Name+": ") {
			t.Errorf("Stats.Device %s, but the device bound in %s is %s", d.Name, dir, loops[0])
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	checkNothingLeft(t, dir, "Close")
	if _, err := r.Run(context.Background()); err != ErrClosed {
		t.Errorf("Run after Close: %v, want ErrClosed", err)
	}
}

// holdScratchEnv makes the test binary a helper that sets up a scratch
// device in the directory the variable names, prints the device's name
// and waits to be killed.
const holdScratchEnv = "TAILGATE_TEST_HOLD_SCRATCH"

func TestHoldScratchHelper(t *testing.T) {
	dir := os.Getenv(holdScratchEnv)
	if dir == "" {
		return // not a helper process
	}
	r, err := NewWorkload(Workload{Kind: "fsync", Params: &Fsync{Dir: dir, Device: FsyncDeviceScratch}})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	st, err := r.Run(ctx)
	cancel()
	if err != nil || st.Device == nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("device", st.Device.Name)
	// Writing while killed: the device is busy when SIGKILL comes.
	r.Run(context.Background())
	os.Exit(1)
}

// TestFsyncScratchKilled: a process killed with SIGKILL while its fsync
// workload writes its loop device leaves no loop device and no file: the
// kernel detaches an autoclear device when its last descriptor closes.
func TestFsyncScratchKilled(t *testing.T) {
	testenv.Need(t, testenv.LoopDevices)
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHoldScratchHelper$")
	cmd.Env = append(os.Environ(), holdScratchEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("helper: %v (%q)", err, line)
	}
	name, ok := strings.CutPrefix(strings.TrimSpace(line), "device ")
	if !ok {
		t.Fatalf("helper: %s", line)
	}
	if loops := loopsBackedIn(t, dir); len(loops) != 1 || !strings.HasPrefix(loops[0], name+": ") {
		t.Fatalf("while the helper runs: loop devices in %s %v, want %s", dir, loops, name)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	checkNothingLeft(t, dir, "SIGKILL")
}
