// Command http-server is the Go service of tailgate's server recipe
// (http.yaml): an HTTP/1.1 server whose one handler answers a small JSON
// document.
//
//	go build -o DIR/http-server ./testdata/server/http              # base
//	go build -tags slow -o DIR/http-server ./testdata/server/http   # head
//
// The head (slow.go) spends 40 µs in user space, spinning on the clock,
// on every 40th request: a change of the handler that moves a client's
// p99 and little else.
//
// Usage: http-server [HOST:]PORT
package main

import (
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
)

var served atomic.Uint64

func handle(w http.ResponseWriter, r *http.Request) {
	n := served.Add(1)
	work(n)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, "{\"n\":%d}\n", n)
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: http-server [HOST:]PORT")
		os.Exit(2)
	}
	addr := os.Args[1]
	if _, err := strconv.Atoi(addr); err == nil {
		addr = net.JoinHostPort("127.0.0.1", addr)
	}
	http.HandleFunc("/", handle)
	log.Fatal(http.ListenAndServe(addr, nil))
}
