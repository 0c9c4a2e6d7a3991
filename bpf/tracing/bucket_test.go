package tracing_test

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/rlimit"

	"github.com/tailgate-ci/tailgate/internal/hist"
)

// The kernel's side of internal/hist's bucket math, bucket.bpf.c over
// bpf/include/hist.bpf.h, built by bpf2go into bucket_bpfel_test.go. It
// sits here, above internal/hist, so that no include runs from a lower
// floor up to bpf/include.
//go:generate go tool bpf2go -cc clang -cflags "-O2 -g -Wall -Werror" -target bpfel -no-global-types -go-package tracing_test bucket bucket.bpf.c -- -I../include

// TestBucketsAgree runs hist_bucket from bpf/include/hist.bpf.h in the kernel
// through BPF_PROG_TEST_RUN and checks it against hist.Bucket on the edges
// of every bucket and on random values across the whole range.
func TestBucketsAgree(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	var objs bucketObjects
	if err := loadBucketObjects(&objs, nil); err != nil {
		t.Fatalf("load bucket: %v", err)
	}
	defer objs.Close()

	var values []uint64
	for i := 0; i < hist.Buckets; i++ {
		lo, w := hist.Bounds(i)
		values = append(values, lo, lo+w-1, lo+w/2)
		if lo > 0 {
			values = append(values, lo-1)
		}
	}
	for e := 0; e < 64; e++ {
		values = append(values, 1<<e, 1<<e-1, 1<<e+1)
	}
	values = append(values, ^uint64(0))
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		values = append(values, rng.Uint64()>>rng.IntN(64))
	}

	ctx := make([]byte, 8)
	for _, v := range values {
		binary.LittleEndian.PutUint64(ctx, v)
		got, err := objs.Bucket.Run(&ebpf.RunOptions{Context: ctx})
		if err != nil {
			t.Fatalf("test run of bucket(%d): %v", v, err)
		}
		if want := hist.Bucket(v); int(got) != want {
			t.Errorf("bucket(%d): C says %d, Go says %d", v, got, want)
		}
	}
	t.Logf("%d values agree", len(values))
}
