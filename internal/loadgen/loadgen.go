// Package loadgen is the built-in load generator: requests sent open loop
// at a constant rate, each one's latency measured from the time the
// schedule meant to send it rather than from when it went out, so that a
// stall of the server (or of the generator) counts against every request
// it delayed. That is how wrk2 and vegeta avoid coordinated omission.
// HTTP/1.1 goes through vegeta's attacker; TCP request/response through a
// paced loop of its own with the same schedule.
package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/tailgate-ci/tailgate/internal/hist"
)

// Spec is one built-in load: HTTP (URL set) or TCP (Addr set), at Rate
// requests per second.
type Spec struct {
	// URL is an http:// URL requested with GET.
	URL string `json:"http,omitempty"`
	// Addr is a TCP host:port; Send is written on a connection and the
	// reply read, ReplyBytes bytes of it, or up to and with ReplyUntil.
	Addr       string `json:"tcp,omitempty"`
	Send       string `json:"send,omitempty"`
	ReplyBytes int    `json:"reply_bytes,omitempty"`
	ReplyUntil string `json:"reply_until,omitempty"`
	// Rate is requests per second.
	Rate int `json:"rate"`
	// Timeout bounds one request; one past it fails the run.
	Timeout time.Duration `json:"timeout,omitempty"`
}

// Limits and defaults.
const (
	MaxRate        = 1000000
	DefaultTimeout = 5 * time.Second
	MaxTimeout     = time.Minute
	MaxReply       = 1 << 20
	// MaxConns bounds the connections one run opens: past it a request
	// waits for a free one, and its wait counts in its latency.
	MaxConns = 1024
)

// Metric is the metric a built-in load (or a user's load generator's
// results) measures: each request's latency as its client felt it.
const Metric = "request.client"

// Check validates s as built in Go rather than parsed; the scenario parser
// checks the same with positions.
func (s *Spec) Check() error {
	switch {
	case (s.URL == "") == (s.Addr == ""):
		return errors.New("load needs one of http (a URL) or tcp (host:port)")
	case s.Rate < 1 || s.Rate > MaxRate:
		return fmt.Errorf("load rate must be from 1 to %d requests per second, got %d", MaxRate, s.Rate)
	case s.Timeout < 0 || s.Timeout > MaxTimeout:
		return fmt.Errorf("load timeout must be up to %v, got %v", MaxTimeout, s.Timeout)
	}
	if s.URL != "" {
		if err := CheckURL(s.URL); err != nil {
			return err
		}
		if s.Send != "" || s.ReplyBytes != 0 || s.ReplyUntil != "" {
			return errors.New("load: send and reply go with tcp, not http")
		}
		return nil
	}
	if err := CheckAddr(s.Addr); err != nil {
		return err
	}
	if s.Send == "" {
		return errors.New("load tcp needs send: the bytes of one request")
	}
	if (s.ReplyBytes == 0) == (s.ReplyUntil == "") {
		return errors.New("load tcp needs reply: {bytes: N} or {until: DELIMITER}")
	}
	if s.ReplyBytes < 0 || s.ReplyBytes > MaxReply {
		return fmt.Errorf("load reply bytes must be from 1 to %d, got %d", MaxReply, s.ReplyBytes)
	}
	return nil
}

// CheckURL checks an http:// URL with a host.
func CheckURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("load http %q: want an http:// URL with a host, e.g. http://127.0.0.1:8080/", s)
	}
	return nil
}

// CheckAddr checks a TCP host:port.
func CheckAddr(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" || port == "" {
		return fmt.Errorf("load tcp %q: want host:port, e.g. 127.0.0.1:7071", s)
	}
	return nil
}

func (s *Spec) timeout() time.Duration {
	if s.Timeout == 0 {
		return DefaultTimeout
	}
	return s.Timeout
}

// period is the time between two intended sends, in whole nanoseconds as
// vegeta's constant pacer has it.
func (s *Spec) period() time.Duration { return time.Second / time.Duration(s.Rate) }

// Outcome is what one run measured.
type Outcome struct {
	// Latency holds each answered request's latency, in ns, from its
	// intended send time to the end of its reply.
	Latency *hist.Histogram
	// Sent counts the requests sent; Failed those that got no good
	// answer (an error, a timeout, an HTTP status of 400 or more), the
	// first of them described by FirstError.
	Sent, Failed uint64
	FirstError   string
}

// Err is the run's failure when a request failed: a latency measured
// over the requests that happened to succeed would hide the failures.
func (o Outcome) Err() error {
	if o.Failed == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d requests failed; the first: %s", o.Failed, o.Sent, o.FirstError)
}

func (o *Outcome) fail(what string) {
	if o.Failed == 0 {
		o.FirstError = what
	}
	o.Failed++
}

// Run sends s's requests until ctx is done and returns what they
// measured; requests in flight then are waited for (up to the timeout).
func Run(ctx context.Context, s *Spec) (Outcome, error) {
	if err := s.Check(); err != nil {
		return Outcome{}, err
	}
	if s.URL != "" {
		return runHTTP(ctx, s), nil
	}
	return runTCP(ctx, s), nil
}

// String names the load for messages: "http://... at 2000/s".
func (s *Spec) String() string {
	if s.URL != "" {
		return fmt.Sprintf("%s at %d/s", s.URL, s.Rate)
	}
	return fmt.Sprintf("tcp %s at %d/s", s.Addr, s.Rate)
}

// HostPort is the address the load connects to: Addr, or the URL's host
// with its port (80 when the URL names none).
func (s *Spec) HostPort() string {
	if s.URL == "" {
		return s.Addr
	}
	u, err := url.Parse(s.URL)
	if err != nil {
		return ""
	}
	if u.Port() == "" {
		return net.JoinHostPort(u.Hostname(), "80")
	}
	return u.Host
}
