// Command echo-server is the server of tailgate's exec example: it answers
// each fixed-size request on a TCP connection with the request itself.
package main

import (
	"flag"
	"io"
	"log"
	"net"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:7071", "listen on `host:port`")
	size := flag.Int("size", 64, "request and response `bytes`")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go serve(c, *size)
	}
}

func serve(c net.Conn, size int) {
	defer c.Close()
	buf := make([]byte, size)
	for {
		if _, err := io.ReadFull(c, buf); err != nil {
			return // the client is done
		}
		if _, err := c.Write(buf); err != nil {
			return
		}
	}
}
