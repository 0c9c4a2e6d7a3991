package slowdown

import (
	"slices"
	"testing"
	"time"

	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"
)

// getppidCost is the median time of a getppid over rounds of calls.
func getppidCost() time.Duration {
	const calls = 20000
	var ds []time.Duration
	for range 9 {
		start := time.Now()
		for range calls {
			unix.Getppid()
		}
		ds = append(ds, time.Since(start)/calls)
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// The instrument must really slow the traced path: a syscall with the
// slowdown attached takes longer, and no longer once it is closed.
func TestSlowsSyscalls(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	before := getppidCost()
	s, err := Attach(2000)
	if err != nil {
		t.Fatal(err)
	}
	during := getppidCost()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	after := getppidCost()
	t.Logf("getppid: %s before, %s with 2000 instructions on sys_exit, %s after", before, during, after)
	if during < before+50*time.Nanosecond || during < after+50*time.Nanosecond {
		t.Errorf("getppid took %s with the slowdown, %s before and %s after: want ≥ 50 ns more", during, before, after)
	}
}

// A switched slowdown slows the path only while it is on.
func TestSwitchedSlowsWhileOn(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	s, err := AttachSwitched(2000)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	off := getppidCost()
	if err := s.Set(true); err != nil {
		t.Fatal(err)
	}
	on := getppidCost()
	if err := s.Set(false); err != nil {
		t.Fatal(err)
	}
	offAgain := getppidCost()
	t.Logf("getppid: %s off, %s on, %s off again", off, on, offAgain)
	if on < off+50*time.Nanosecond || on < offAgain+50*time.Nanosecond {
		t.Errorf("getppid took %s switched on, %s and %s off: want ≥ 50 ns more", on, off, offAgain)
	}
	if plain, err := Attach(10); err != nil {
		t.Fatal(err)
	} else {
		defer plain.Close()
		if plain.Set(true) == nil {
			t.Error("Set on a slowdown that is not switched: no error")
		}
	}
}

func TestRefusesSizes(t *testing.T) {
	for _, n := range []int{0, -1, 1000000} {
		if s, err := Attach(n); err == nil {
			s.Close()
			t.Errorf("Attach(%d): no error", n)
		}
	}
}
