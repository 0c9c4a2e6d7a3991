// Command http-client is the load of tailgate's server recipe
// (http.yaml): it sends GET requests to a server one at a time over one
// kept-alive connection and prints "ok" and the round trip's time in ns
// for each answer.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"time"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:7082/", "the `URL` to get")
	n := flag.Int("n", 10000, "`requests` to send")
	flag.Parse()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for range *n {
		start := time.Now()
		resp, err := client.Get(*url)
		if err != nil {
			log.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			log.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			log.Fatalf("%s: %s", *url, resp.Status)
		}
		fmt.Fprintf(out, "ok %d\n", time.Since(start).Nanoseconds())
	}
}
