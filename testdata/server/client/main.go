// Command client is the load of tailgate's server recipes (tcp.yaml,
// http.yaml): it sends requests to a server one at a time over one
// connection, 64-byte echoes over TCP (-tcp) or GET requests over a
// kept-alive HTTP/1.1 connection (-url), prints "ok" and the round trip's
// time in ns for each answer, and with -hlog writes every round trip's
// time, in ns, to FILE as an HdrHistogram interval log when it has sent
// -n requests or is interrupted (SIGINT or SIGTERM, as a trial's end
// stops it). The recipes read that log as request.client.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

func main() {
	addr := flag.String("tcp", "", "a TCP echo server's `host:port`, sent 64-byte requests")
	rawURL := flag.String("url", "", "the `URL` to GET")
	n := flag.Int("n", 10000, "`requests` to send")
	hlog := flag.String("hlog", "", "write the round trips' times (ns) to `FILE` as an HdrHistogram interval log")
	flag.Parse()
	if (*addr == "") == (*rawURL == "") {
		log.Fatal("give one of -tcp HOST:PORT or -url URL")
	}
	// Before the dial, so that a trial's end during it still gets a log.
	var stop atomic.Bool
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() { <-sig; stop.Store(true) }()
	var request func() error
	if *addr != "" {
		request = echo(*addr)
	} else {
		request = get(*rawURL)
	}

	// 1 ns to 10 s at 3 significant digits, HdrHistogram's usual range.
	h := hdrhistogram.New(1, int64(10*time.Second), 3)
	began := time.Now()
	out := bufio.NewWriter(os.Stdout)
	for i := 0; i < *n && !stop.Load(); i++ {
		start := time.Now()
		if err := request(); err != nil {
			if stop.Load() {
				break // the answer the signal cut short is not a request's time
			}
			out.Flush()
			log.Fatal(err)
		}
		ns := time.Since(start).Nanoseconds()
		if err := h.RecordValue(ns); err != nil {
			log.Fatalf("request %d: %v", i, err)
		}
		fmt.Fprintf(out, "ok %d\n", ns)
	}
	if err := out.Flush(); err != nil {
		log.Fatal(err)
	}
	if *hlog != "" {
		if err := writeLog(*hlog, h, began); err != nil {
			log.Fatal(err)
		}
	}
}

// echo returns a request that writes 64 bytes to addr and reads their echo.
func echo(addr string) func() error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	req, resp := make([]byte, 64), make([]byte, 64)
	var i byte
	return func() error {
		i++
		req[0] = i
		if _, err := c.Write(req); err != nil {
			return err
		}
		if _, err := io.ReadFull(c, resp); err != nil {
			return err
		}
		if resp[0] != req[0] {
			return fmt.Errorf("%s: the answer is not the request's echo", addr)
		}
		return nil
	}
}

// get returns a request that GETs url over one kept-alive connection,
// written and read on this goroutine as wrk does: net/http's client hands
// each request to two goroutines of its own, and their wakeups were most
// of its round trip's tail.
func get(rawURL string) func() error {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "http" {
		log.Fatalf("-url %s: want http://HOST:PORT/PATH", rawURL)
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		log.Fatal(err)
	}
	req := []byte("GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\n\r\n")
	br := bufio.NewReader(c)
	return func() error {
		if _, err := c.Write(req); err != nil {
			return err
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK || resp.Close {
			return fmt.Errorf("%s: %s (close %v)", rawURL, resp.Status, resp.Close)
		}
		return nil
	}
}

// writeLog writes h as a one-interval HdrHistogram log to path. tailgate
// reads it once the client has exited.
func writeLog(path string, h *hdrhistogram.Histogram, began time.Time) error {
	h.SetStartTimeMs(began.UnixMilli())
	h.SetEndTimeMs(time.Now().UnixMilli())
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := hdrhistogram.NewHistogramLogWriter(f)
	w.SetBaseTime(began.UnixMilli())
	err = w.OutputLogFormatVersion()
	if err == nil {
		err = w.OutputStartTime(began.UnixMilli())
	}
	if err == nil {
		err = w.OutputLegend()
	}
	if err == nil {
		err = w.OutputIntervalHistogram(h)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
