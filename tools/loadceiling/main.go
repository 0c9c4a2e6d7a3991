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
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/loadgen"
)

func main() {
	kind := flag.String("kind", "http", "http or tcp")
	hold := flag.Duration("hold", 10*time.Millisecond, "how long the server holds each request")
	rates := flag.String("rates", "1000,2000,5000,10000,20000", "requests per second, comma-separated")
	dur := flag.Duration("duration", 5*time.Second, "per rate")
	flag.Parse()
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
