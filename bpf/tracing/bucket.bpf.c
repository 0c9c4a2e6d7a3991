//go:build ignore

/* bucket.bpf.c: runs hist_bucket from hist.bpf.h on values given through
 * BPF_PROG_TEST_RUN, so that a test can check the C bucket math against Go's.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "hist.bpf.h"

struct args {
	__u64 value;
};

SEC("syscall")
int bucket(struct args *a)
{
	return hist_bucket(a->value);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
