package vm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/kernels"
)

// guestResult is a valid Result as a guest sends it, with metric m.
func guestResult(m string) *result.Result {
	h := hist.New()
	h.RecordN(1000, 5)
	return &result.Result{Schema: result.SchemaVersion, Scenarios: []result.Scenario{{
		Name: "syscall-read", Trials: 1,
		Metrics: map[string]*result.Metric{m: {Unit: "ns", Trials: []result.Trial{{Histogram: h, Summary: result.Summarize(h), Ops: 5, Duration: 1}}}},
	}}}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const nullMetric = `{"schema":1,"scenarios":[{"name":"s","metrics":{"m":null},"trials":1}]}`

// TestGuestReplyAttacks feeds the host's reader replies a broken or
// hostile guest could send: each is an ErrBadReply, never a panic nor a
// Result.
func TestGuestReplyAttacks(t *testing.T) {
	good := mustJSON(t, guestResult("syscall_latency"))
	dup := guestResult("m")
	dup.Scenarios = append(dup.Scenarios, dup.Scenarios[0])
	for _, tc := range []struct {
		name string
		raw  []byte
		want string
	}{
		{"null metric in a result", encodeFrame(frameResult, []byte(nullMetric)), "metric m is null"},
		{"null metric in a failure's partial result", encodeFrame(frameError, []byte(`{"error":"boom","result":`+nullMetric+`}`)), "metric m is null"},
		{"null histogram in a failure's partial result", encodeFrame(frameError, []byte(`{"error":"boom","result":{"schema":1,"scenarios":[{"name":"s","metrics":{"m":{"unit":"ns","trials":[{}]}}}]}}`)), "has no histogram"},
		{"unknown field in a failure", encodeFrame(frameError, []byte(`{"error":"boom","exploit":1}`)), "unknown field"},
		{"data after a failure", encodeFrame(frameError, []byte(`{"error":"boom"} {"error":"again"}`)), "data after"},
		{"failure that is not JSON", encodeFrame(frameError, []byte(`boom`)), "error frame"},
		{"future schema", encodeFrame(frameResult, []byte(`{"schema":99}`)), "schema 99"},
		{"old schema", encodeFrame(frameResult, []byte(`{"schema":0}`)), "schema 0"},
		{"scenario twice", encodeFrame(frameResult, mustJSON(t, dup)), "appears twice"},
		{"negative trials", encodeFrame(frameResult, []byte(`{"schema":1,"scenarios":[{"name":"s","metrics":{},"trials":-1}]}`)), "-1 trials"},
		{"corrupt frame", append(encodeFrame(frameResult, good), 'x'), "bytes after the frame"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, failure, err := parseReply(tc.raw)
			if !errors.Is(err, ErrBadReply) || res != nil || failure != "" {
				t.Fatalf("parseReply = %v, %q, %v; want ErrBadReply alone", res, failure, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
	if res, failure, err := parseReply(encodeFrame(frameResult, good)); err != nil || res == nil || failure != "" {
		t.Errorf("good reply: %v, %q, %v", res, failure, err)
	}
}

// TestGuestReplyFailureMessageEscaped: a guest's failure message cannot
// move the terminal's cursor, forge a line of the host's own beyond its
// newlines, or run on for megabytes.
func TestGuestReplyFailureMessageEscaped(t *testing.T) {
	msg := "attach: denied\x1b[2K\r\x1b[1Atailgate gate: PASS\u2028\n::error::forged\n" + strings.Repeat("x", 1<<20) + "\xff"
	raw := encodeFrame(frameError, mustJSON(t, map[string]string{"error": msg}))
	res, failure, err := parseReply(raw)
	if err != nil || res != nil {
		t.Fatalf("parseReply = %v, %v", res, err)
	}
	if len(failure) > maxGuestMessage+64 {
		t.Errorf("failure message of %d bytes, want at most about %d", len(failure), maxGuestMessage)
	}
	for _, r := range failure {
		if r != '\t' && (unicode.IsControl(r) || r == '\u2028') {
			t.Fatalf("control character %U left in %q", r, failure[:80])
		}
	}
	if !strings.HasPrefix(failure, `attach: denied\u001b[2K\u000d\u001b[1Atailgate gate: PASS\u2028; ::error::forged; xx`) {
		t.Errorf("failure = %q...", failure[:60])
	}
	if _, failure, _ := parseReply(encodeFrame(frameError, []byte(`{"error":""}`))); failure == "" {
		t.Error("an empty failure message reads as success")
	}
}

// TestGuestReplyOversizedFile: a results file over the limit is refused
// from its size, without reading it (the file is sparse: reading it would
// take 256 MiB).
func TestGuestReplyOversizedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), resultsFile)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxReply + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	b, err := readReply(path)
	if !errors.Is(err, ErrBadReply) || b != nil {
		t.Fatalf("readReply = %d bytes, %v; want ErrBadReply", len(b), err)
	}
	os.Truncate(path, maxReply)
	if _, err := readCapped(path, maxReply-1); !errors.Is(err, ErrBadReply) {
		t.Errorf("readCapped over its limit: %v", err)
	}
}

// TestGuestConsoleLongLine: a guest that prints one endless line does not
// grow the host's memory with it: the line is scanned up to
// maxConsoleLine bytes, and the log stops at maxConsoleLog.
func TestGuestConsoleLongLine(t *testing.T) {
	var log countingWriter
	s := &consoleScanner{log: &log, progress: func(string) {}, started: make(chan struct{})}
	r := io.MultiReader(strings.NewReader("Linux version 6.1\n"), io.LimitReader(repeatReader('A'), maxConsoleLog+maxConsoleLog/2), strings.NewReader("\ntailgate> last\n"))
	s.run(bufio.NewReader(r))
	for _, l := range s.tail() {
		if len(l) > maxConsoleLine {
			t.Errorf("a console line of %d bytes kept, the limit is %d", len(l), maxConsoleLine)
		}
	}
	if log.n > maxConsoleLog+200 {
		t.Errorf("console log of %d bytes, the limit is %d", log.n, maxConsoleLog)
	}
	if !bytes.Contains(log.last, []byte("limit")) {
		t.Errorf("the log does not say it was cut: ends %q", log.last)
	}
}

type countingWriter struct {
	n    int
	last []byte
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	w.last = append(w.last[:0], p[max(0, len(p)-200):]...)
	return len(p), nil
}

type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// fakeGuestRun runs a VM whose QEMU is a script that writes reply to the
// results port's file, as a guest would, and exits.
func fakeGuestRun(t *testing.T, name string, reply []byte) (*result.Result, error) {
	t.Helper()
	init := buildStaticBinary(t) // before TMPDIR changes: it is built once, for every test
	t.Setenv("TMPDIR", t.TempDir())
	dir := t.TempDir()
	replyFile := filepath.Join(dir, "reply")
	os.WriteFile(replyFile, reply, 0o600)
	qemu := filepath.Join(dir, "qemu")
	script := "#!/bin/sh\necho 'Linux version fake'\nfor a; do case $a in file,id=results,path=*) cat " + replyFile + " > \"${a#file,id=results,path=}\";; esac; done\n"
	os.WriteFile(qemu, []byte(script), 0o755)
	vm := Machine{Name: name, Kernel: &kernels.Kernel{Spec: "fake", Image: "/nonexistent/vmlinuz"}, Init: init, QEMU: qemu, Setup: mustSetup(t, Settings{Accel: "tcg"})}
	return Run(context.Background(), vm, GuestRequest{}, func(s string) { t.Log(s) })
}

// TestRunGuestNullMetricNamesGuest: the whole host path of Run, with a
// guest whose failure carries a partial Result with a null metric (which
// once panicked the host): an error naming the VM, no Result.
func TestRunGuestNullMetricNamesGuest(t *testing.T) {
	res, err := fakeGuestRun(t, "evil-guest", encodeFrame(frameError, []byte(`{"error":"boom","result":`+nullMetric+`}`)))
	var ve *VMError
	if !errors.As(err, &ve) || !errors.Is(err, ErrBadReply) || res != nil {
		t.Fatalf("Run = %v, %v; want a *VMError of ErrBadReply and no Result", res, err)
	}
	if first, _, _ := strings.Cut(err.Error(), "\n"); !strings.HasPrefix(first, "vm evil-guest: bad reply from guest") {
		t.Errorf("first line %q does not name the VM", first)
	}
	res, err = fakeGuestRun(t, "good-guest", encodeFrame(frameResult, mustJSON(t, guestResult("m"))))
	if err != nil || res == nil || res.Target.Name != "good-guest" {
		t.Fatalf("good guest: %v, %v", res, err)
	}
}

// TestRunGuestFloodsResultsFile: a guest that writes its results port
// without end is stopped once the file passes what the host reads, rather
// than filling the host's disk. The fake QEMU grows the file sparsely and
// waits to be killed.
func TestRunGuestFloodsResultsFile(t *testing.T) {
	init := buildStaticBinary(t)
	t.Setenv("TMPDIR", t.TempDir())
	dir := t.TempDir()
	qemu := filepath.Join(dir, "qemu")
	script := "#!/bin/sh\n[ \"$1\" = --version ] && exit 1\necho 'Linux version fake'\nfor a; do case $a in file,id=results,path=*) truncate -s 300M \"${a#file,id=results,path=}\";; esac; done\nexec sleep 60\n"
	os.WriteFile(qemu, []byte(script), 0o755)
	vm := Machine{Name: "flood", Kernel: &kernels.Kernel{Spec: "fake", Image: "/nonexistent/vmlinuz"}, Init: init, QEMU: qemu, Setup: mustSetup(t, Settings{Accel: "tcg"})}
	_, err := Run(context.Background(), vm, GuestRequest{}, nil)
	if !errors.Is(err, ErrBadReply) || !strings.Contains(err.Error(), "vm flood: ") || !strings.Contains(err.Error(), "grew past") {
		t.Fatalf("Run = %v; want ErrBadReply naming vm flood and the file", err)
	}
}

// FuzzGuestReply feeds the host's reader of a guest's reply any payload
// in either kind of frame, and raw bytes: it never panics, a refusal is
// ErrBadReply without a Result, and what it accepts the host can merge,
// summarize and write out, with a failure message fit to print.
func FuzzGuestReply(f *testing.F) {
	f.Add(frameResult, mustJSON(f, guestResult("m")))
	f.Add(frameError, []byte(`{"error":"boom","result":`+nullMetric+`}`))
	f.Add(frameError, []byte(`{"error":"x\u001b[1A"}`))
	f.Add(frameResult, []byte(nullMetric))
	f.Fuzz(func(t *testing.T, kind byte, payload []byte) {
		for _, raw := range [][]byte{encodeFrame(kind, payload), payload} {
			res, failure, err := parseReply(raw)
			if err != nil {
				if !errors.Is(err, ErrBadReply) || res != nil || failure != "" {
					t.Fatalf("refusal %v came with %v, %q", err, res, failure)
				}
				continue
			}
			for _, r := range failure {
				if r != '\n' && r != '\t' && unicode.IsControl(r) {
					t.Fatalf("control character %U in the failure message", r)
				}
			}
			if res == nil {
				continue
			}
			nameGuestFrames(res, nil)
			merged, err := result.Merge([]result.Input{{Path: "boot 1", Result: res}, {Path: "boot 2", Result: res}})
			if err != nil {
				continue
			}
			for _, s := range merged.Scenarios {
				for _, m := range s.Metrics {
					result.Summarize(m.Merged())
				}
			}
			if _, err := result.Marshal(merged); err != nil {
				t.Fatalf("accepted reply does not write out: %v", err)
			}
		}
	})
}

// TestGuestReplyAtTheCapIsRefusedNotHeld: a reply of 256 MiB of one-bucket
// trials once cost the host about 100 times its size to decode (28 GiB:
// killed for memory, not the exit 3 promised). Trials past what a run
// makes are refused before any is decoded: ErrBadReply in one line, and
// the host holds little beyond the reply's own bytes while reading it.
func TestGuestReplyAtTheCapIsRefusedNotHeld(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 256 MiB reply")
	}
	const head = `{"schema":1,"scenarios":[{"name":"s","trials":1,"metrics":{"m":{"unit":"ns","trials":[`
	const tail = `]}}}]}`
	var payload bytes.Buffer
	payload.Grow(frameMaxBody)
	payload.WriteString(head)
	for pid := 1; ; pid++ {
		tr := fmt.Sprintf(`{"histogram":{"scheme":"loglinear-k6-e42","count":1,"min":1000,"max":1000,"sum":1000,"buckets":[[1000,1]]},"summary":{"count":1,"p50":1000,"p90":1000,"p99":1000,"p99_9":1000,"max":1000},"ops":1,"duration_s":1,"pid":%d}`, pid)
		if payload.Len()+len(tr)+1+len(tail) > frameMaxBody {
			break
		}
		if pid > 1 {
			payload.WriteByte(',')
		}
		payload.WriteString(tr)
	}
	payload.WriteString(tail)
	raw := encodeFrame(frameResult, payload.Bytes())
	payload = bytes.Buffer{}
	var before, peak runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, _, err := parseReply(raw)
	runtime.ReadMemStats(&peak)
	if !errors.Is(err, ErrBadReply) || res != nil || !strings.Contains(err.Error(), "more than 1000 trials") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a %d-byte reply of one-bucket trials: %v, %v; want ErrBadReply saying more than 1000 trials, in one line", len(raw), res, err)
	}
	// TotalAlloc counts every byte allocated while reading, freed or not.
	if got := peak.TotalAlloc - before.TotalAlloc; got > uint64(len(raw)) {
		t.Errorf("reading a %d-byte reply allocated %d bytes; want at most its size", len(raw), got)
	}
}
