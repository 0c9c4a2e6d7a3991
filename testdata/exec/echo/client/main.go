// Command echo-client is the load of tailgate's exec example: it sends
// requests to echo-server one at a time and prints "ok" and the round
// trip's time for each answer.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:7071", "the server's `host:port`")
	n := flag.Int("n", 10000, "`requests` to send")
	size := flag.Int("size", 64, "request and response `bytes`")
	flag.Parse()
	c, err := net.Dial("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	req, resp := make([]byte, *size), make([]byte, *size)
	for i := range *n {
		req[0] = byte(i)
		start := time.Now()
		if _, err := c.Write(req); err != nil {
			log.Fatal(err)
		}
		if _, err := io.ReadFull(c, resp); err != nil {
			log.Fatal(err)
		}
		if resp[0] != req[0] {
			log.Fatalf("request %d: wrong answer", i)
		}
		fmt.Fprintf(out, "ok %d\n", time.Since(start).Nanoseconds())
	}
}
