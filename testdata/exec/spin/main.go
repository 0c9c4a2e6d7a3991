// Command spin-server is an HTTP server whose handler works (spins on the
// CPU) for a fixed time per request, for gating tailgate's built-in load:
// a build with more work is a slower head, made outside tailgate's code.
//
//	go build -o /tmp/spin/base/ ./testdata/exec/spin
//	go build -ldflags '-X main.work=225us' -o /tmp/spin/head/ ./testdata/exec/spin
package main

import (
	"flag"
	"log"
	"net/http"
	"time"
)

// work is how long each request spins; set at build time.
var work = "200us"

func main() {
	addr := flag.String("addr", "127.0.0.1:7073", "listen on `host:port`")
	flag.Parse()
	d, err := time.ParseDuration(work)
	if err != nil {
		log.Fatalf("work %q: %v", work, err)
	}
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		spin(d)
		w.Write([]byte("ok\n"))
	})
	log.Fatal(http.ListenAndServe(*addr, nil))
}

// spin keeps the CPU busy for d, as a handler that computes does.
func spin(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}
