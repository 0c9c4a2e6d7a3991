// gowork calls Go functions that the ufunc tests time, once a line
// arrives on its standard input, and prints its own timing of each:
//
//	gowork sleep N G D   N calls of work, from G goroutines, each call
//	                     sleeping D (a duration) in a fresh goroutine's
//	                     stack, which it grows at its entry; nest and spin
//	                     calls beside them
//	gowork nop N         N calls of nop in a loop, then N of framed
//
// For each function it prints a line: its name, the calls made, the
// median of its calls' durations in ns, as each call times itself from
// its first statement to its return (nop and framed: the mean, timed
// around the loop, then as name-cpu the mean CPU time of the process),
// how many of the calls returned on another thread than they began on,
// and (sleep) the calls' p45 and p55.
package main

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"
)

var sink []byte

// work sleeps d: the goroutine blocks, and may return on another thread.
// Its frame is larger than a new goroutine's stack, so its entry grows
// the stack first. It allocates, so that the collector runs and walks
// the stacks of goroutines inside it.
//
//go:noinline
func work(d time.Duration) int {
	c := works.begin()
	var frame [16 << 10]byte
	frame[len(frame)-1] = byte(d)
	sink = make([]byte, 4096)
	time.Sleep(d)
	works.end(c)
	return int(frame[len(frame)-1])
}

// nest calls itself n deep, and the innermost call sleeps d: each of the
// n+1 calls takes about d.
//
//go:noinline
func nest(n int, d time.Duration) int {
	c := nests.begin()
	if n == 0 {
		time.Sleep(d)
		nests.end(c)
		return 0
	}
	r := nest(n-1, d) + 1
	nests.end(c)
	return r
}

// spin runs on the CPU for d, where the runtime preempts it with a
// signal when another goroutine waits.
//
//go:noinline
func spin(d time.Duration) int {
	c := spins.begin()
	n := 0
	for time.Since(c.start) < d {
		n++
	}
	spins.end(c)
	return n
}

// nop is a leaf: no frame, no stack check.
//
//go:noinline
func nop(x int) int { return x + 1 }

// framed has a frame, and begins with a stack check.
//
//go:noinline
func framed(x int) int { return nop(x) + 1 }

type counter struct{ n int }

//go:noinline
func (c *counter) Add(x int) int {
	c.n += x
	return c.n
}

// wrapped promotes (*counter).Add: the compiler writes (*wrapped).Add,
// which ends in a tail call to (*counter).Add.
type wrapped struct{ *counter }

// adders keeps the compiler from knowing which Add main calls.
var adders = []interface{ Add(int) int }{&wrapped{&counter{}}, &counter{}}

// timing is one function's calls, as they time themselves.
type timing struct {
	mu       sync.Mutex
	ns       []int64
	migrated int
}

var works, nests, spins timing

// call is one call in progress.
type call struct {
	start time.Time
	tid   int
}

func (t *timing) begin() call { return call{time.Now(), syscall.Gettid()} }

func (t *timing) end(c call) {
	d := time.Since(c.start)
	moved := syscall.Gettid() != c.tid
	t.mu.Lock()
	t.ns = append(t.ns, int64(d))
	if moved {
		t.migrated++
	}
	t.mu.Unlock()
}

// print prints the calls' median as tailgate's histograms read a p50:
// the ceil(n/2)-th smallest; and their p45 and p55 likewise. Where the
// calls fall in clusters (nest's levels) the median sits at a cluster's
// edge, and a few calls that a probe sees longer than their own clock
// does (a preemption between the entry and the first statement) move it
// by a whole gap: p45 and p55 bound where it may fall.
func (t *timing) print(name string) {
	slices.Sort(t.ns)
	at := func(pct int) int64 { return t.ns[(len(t.ns)*pct+99)/100-1] }
	fmt.Printf("%s %d %d %d %d %d\n", name, len(t.ns), at(50), t.migrated, at(45), at(55))
}

// cpuTime is the CPU time the process has used, in user space and in the
// kernel: what the probes' traps cost it, without the time it waited for
// a CPU.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: gowork sleep N G D | gowork nop N")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil || n <= 0 {
		fmt.Fprintln(os.Stderr, "gowork: N must be a count")
		os.Exit(2)
	}
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		os.Exit(1)
	}
	switch os.Args[1] {
	case "refused":
		refused[n%len(refused)]()
	case "nop":
		x := adders[len(os.Args)%2].Add(1)
		start, cpu := time.Now(), cpuTime()
		for i := 0; i < n; i++ {
			x = nop(x)
		}
		fmt.Printf("nop %d %d 0\n", n, time.Since(start).Nanoseconds()/int64(n))
		fmt.Printf("nop-cpu %d %d 0\n", n, (cpuTime()-cpu).Nanoseconds()/int64(n))
		start, cpu = time.Now(), cpuTime()
		for i := 0; i < n; i++ {
			x = framed(x)
		}
		fmt.Printf("framed %d %d 0\n", n, time.Since(start).Nanoseconds()/int64(n))
		fmt.Printf("framed-cpu %d %d 0\n", n, (cpuTime()-cpu).Nanoseconds()/int64(n))
		if x == 0 {
			os.Exit(1) // x is used
		}
	case "sleep":
		g, err1 := strconv.Atoi(os.Args[3])
		d, err2 := time.ParseDuration(os.Args[4])
		if err1 != nil || err2 != nil || g <= 0 {
			fmt.Fprintln(os.Stderr, "gowork: G must be a count, D a duration")
			os.Exit(2)
		}
		var wg sync.WaitGroup
		for range g {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < n/g; i++ {
					// A fresh goroutine each call: work grows its stack.
					done := make(chan struct{})
					go func() {
						work(d)
						close(done)
					}()
					<-done
					if i%10 == 0 {
						nest(3, d)
						spin(d / 4)
					}
				}
			}()
		}
		wg.Wait()
		works.print("work")
		nests.print("nest")
		spins.print("spin")
	default:
		fmt.Fprintln(os.Stderr, "gowork: sleep or nop")
		os.Exit(2)
	}
}
