// Command loadceiling measures the built-in load generator's own ceiling:
// at each rate it loads an in-process server that holds every request
// for a fixed time, and compares the p99 the generator measures (from
// each request's intended send time to its answer) with the server's own
// p99 of the same requests (from their arrival to their answer). The
// difference is what the generator adds: late sends, the loopback trips,
// its own reading; the ceiling is the highest rate at which it stays
// under 1% of the truth.
//
//	go run ./tools/loadceiling -kind http -hold 10ms -rates 1000,5000,10000 -duration 5s
//
// With -cost it measures instead the generator's own CPU time per
// request, against the same server run as a child process, so that the
// CPU time of this process is the generator's alone: what bounds its rate
// on a core however busy the machine is.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/loadgen"
)

func main() {
	kind := flag.String("kind", "http", "http or tcp")
	hold := flag.Duration("hold", 10*time.Millisecond, "how long the server holds each request")
	rates := flag.String("rates", "1000,2000,5000,10000,20000", "requests per second, comma-separated")
	dur := flag.Duration("duration", 5*time.Second, "per rate")
	cost := flag.Bool("cost", false, "measure the generator's CPU time per request instead")
	serve := flag.String("serve", "", "serve on `addr` (the child of -cost)")
	flag.Parse()
	if *serve != "" {
		serveChild(*kind, *serve, *hold)
		return
	}
	if *cost {
		for _, f := range strings.Split(*rates, ",") {
			rate, err := strconv.Atoi(f)
			if err != nil {
				log.Fatal(err)
			}
			if err := measureCost(*kind, rate, *hold, *dur); err != nil {
				log.Fatal(err)
			}
		}
		return
	}
	fmt.Printf("%-6s %8s %10s %10s %10s %10s %8s\n", "kind", "rate", "requests", "client p99", "server p99", "excess", "error")
	for _, f := range strings.Split(*rates, ",") {
		rate, err := strconv.Atoi(f)
		if err != nil {
			log.Fatal(err)
		}
		if err := measure(*kind, rate, *hold, *dur); err != nil {
			log.Fatal(err)
		}
	}
}

// truth is the server's own record of its requests.
type truth struct {
	mu sync.Mutex
	h  *hist.Histogram
}

func (t *truth) record(arrived time.Time) {
	d := time.Since(arrived)
	t.mu.Lock()
	t.h.Record(uint64(d))
	t.mu.Unlock()
}

func measure(kind string, rate int, hold, dur time.Duration) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	tr := &truth{h: hist.New()}
	spec := &loadgen.Spec{Rate: rate}
	if kind == "http" {
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			a := time.Now()
			time.Sleep(hold)
			w.Write([]byte("ok\n"))
			tr.record(a)
		})}
		go srv.Serve(ln)
		defer srv.Close()
		spec.URL = "http://" + ln.Addr().String() + "/"
	} else {
		go serveTCP(ln, hold, tr)
		spec.Addr, spec.Send, spec.ReplyUntil = ln.Addr().String(), "q\n", "\n"
	}
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	o, err := loadgen.Run(ctx, spec)
	if err != nil {
		return err
	}
	if err := o.Err(); err != nil {
		return err
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	c, s := o.Latency.Quantile(0.99), tr.h.Quantile(0.99)
	fmt.Printf("%-6s %8d %10d %10s %10s %10s %7.2f%%\n", kind, rate, o.Latency.Count(),
		time.Duration(c).Round(time.Microsecond), time.Duration(s).Round(time.Microsecond),
		time.Duration(c-s).Round(time.Microsecond), 100*(c/s-1))
	return nil
}

func serveTCP(ln net.Listener, hold time.Duration, tr *truth) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			br := bufio.NewReader(c)
			for {
				if _, err := br.ReadString('\n'); err != nil {
					return
				}
				a := time.Now()
				time.Sleep(hold)
				if _, err := c.Write([]byte("a\n")); err != nil {
					fmt.Fprintln(os.Stderr, err)
					return
				}
				tr.record(a)
			}
		}()
	}
}

// serveChild serves kind on addr, holding each request, until killed.
func serveChild(kind, addr string, hold time.Duration) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	tr := &truth{h: hist.New()}
	if kind == "http" {
		log.Fatal(http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(hold)
			w.Write([]byte("ok\n"))
		})))
	}
	serveTCP(ln, hold, tr)
}

// measureCost loads a child server at rate and prints this process's CPU
// time (user and system) per request sent.
func measureCost(kind string, rate int, hold, dur time.Duration) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	ln.Close()
	child := exec.Command(os.Args[0], "-kind", kind, "-hold", hold.String(), "-serve", addr)
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		return err
	}
	defer func() {
		child.Process.Kill()
		child.Wait()
	}()
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		} else if i > 500 {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
	spec := &loadgen.Spec{Rate: rate, URL: "http://" + addr + "/"}
	if kind == "tcp" {
		spec = &loadgen.Spec{Rate: rate, Addr: addr, Send: "q\n", ReplyUntil: "\n"}
	}
	before := cpuTime()
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	o, err := loadgen.Run(ctx, spec)
	if err != nil {
		return err
	}
	used := cpuTime() - before
	if err := o.Err(); err != nil {
		return err
	}
	fmt.Printf("%-6s %8d %10d requests, generator CPU %v per request (%.0f%% of a core)\n", kind, rate, o.Sent,
		(used / time.Duration(o.Sent)).Round(100*time.Nanosecond), 100*used.Seconds()/dur.Seconds())
	return nil
}

// cpuTime is this process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		log.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
