//go:build ignore

/* tcp.bpf.c: where a TCP message of the workload spends its time between
 * the sender's TCP and the receiving application, in two stages:
 *
 *   net.tcp.deliver  a data segment sent by a socket of the workload,
 *       from the device queue (net_dev_queue, as the sender's TCP transmits
 *       it) to the receiving socket's TCP input (tcp_probe, at
 *       tcp_rcv_established, just before it queues the data and wakes the
 *       reader). On loopback: the qdisc, the backlog queue, the NET_RX
 *       softirq (or ksoftirqd, when softirqs are deferred), IP and TCP
 *       input.
 *   net.tcp.rcvq  data received by a socket of the workload, from reaching
 *       an empty receive queue (tcp_probe) to the application copying it
 *       out (tcp_rcv_space_adjust, which recvmsg calls after each copy):
 *       the reader's wakeup, its wait to run and its way back into recvmsg.
 *
 * A segment is matched from transmission to reception by its ports and
 * sequence number, read from its TCP header at both ends, so no pointer is
 * trusted across the two. Only the workload's sockets count: a TCP socket
 * is the workload's once a task of the workload connects it, listens on
 * it, or reads from it; a connection accepted on a listening socket of the
 * workload is the workload's too. A socket stops counting when it closes.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "hist.bpf.h"
#include "follow.bpf.h"
#include "evidence.bpf.h"
#include "tp.bpf.h"
#include "tcp.h"

#define MAX_SOCKS 16384
#define MAX_SEGS 8192

/* A socket of the workload. rcv_ts is when the oldest data its reader has
 * not yet copied arrived (0 when there is none), rcv_seq its first byte.
 * tcp_probe writes it under the socket's spinlock with the socket not owned
 * by a user, and tcp_rcv_space_adjust with the socket owned: never both at
 * once. */
struct sock_state {
	__u64 rcv_ts;
	__u32 rcv_seq;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MAX_SOCKS);
	__type(key, __u64); /* struct sock * */
	__type(value, struct sock_state);
} socks SEC(".maps");

/* Local ports of the workload's listening sockets: the connections they
 * accept are the workload's. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} listeners SEC(".maps");

/* A data segment in flight, as both ends see it. */
struct seg_key {
	__u16 sport; /* host order */
	__u16 dport;
	__u32 seq;
};

/* Transmission times of the workload's data segments in flight. LRU: a
 * segment bound for another host never reaches a tcp_probe here. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_SEGS);
	__type(key, struct seg_key);
	__type(value, __u64);
} segs SEC(".maps");

HIST_MAPS;

static __always_inline __u16 ntoh16(__u16 v) { return __builtin_bswap16(v); }
static __always_inline __u32 ntoh32(__u32 v) { return __builtin_bswap32(v); }

/* seg_of reads the TCP header at th and reports whether the segment
 * carries data (len bytes from th to the end of the skb); key is set when
 * it does. */
static __always_inline bool seg_of(const void *th, __s64 len, struct seg_key *key)
{
	struct tcphdr h;

	if (bpf_probe_read_kernel(&h, sizeof(h), th))
		return false;
	if (len - (__s64)h.doff * 4 <= 0)
		return false; /* a pure ACK, SYN or FIN: no data to wait for */
	key->sport = ntoh16(h.source);
	key->dport = ntoh16(h.dest);
	key->seq = ntoh32(h.seq);
	return true;
}

static __always_inline void on_dev_queue(struct sk_buff *skb)
{
	struct sock *sk = BPF_CORE_READ(skb, sk);
	__u64 skp = (__u64)sk, now;
	struct seg_key key = {};
	unsigned char *head, *data;
	__u16 thoff;

	if (!sk || !bpf_map_lookup_elem(&socks, &skp))
		return;
	head = BPF_CORE_READ(skb, head);
	data = BPF_CORE_READ(skb, data);
	thoff = BPF_CORE_READ(skb, transport_header);
	if (thoff == (__u16)~0U)
		return;
	/* skb->data is at the link-layer header here. */
	if (!seg_of(head + thoff, (__s64)BPF_CORE_READ(skb, len) - (head + thoff - data), &key))
		return;
	now = bpf_ktime_get_ns();
	bpf_map_update_elem(&segs, &key, &now, BPF_ANY);
}

static __always_inline void on_probe(void *ctx, struct sock *sk, struct sk_buff *skb)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	__u64 skp = (__u64)sk, now, *ts;
	struct seg_key key = {};
	struct sock_state *st;
	__u32 rcv_nxt;

	/* skb->data is at the TCP header here. */
	if (!seg_of(BPF_CORE_READ(skb, data), BPF_CORE_READ(skb, len), &key))
		return;
	now = bpf_ktime_get_ns();
	/* Only segments sent by the workload's sockets are in segs, whoever
	 * receives them. */
	ts = bpf_map_lookup_elem(&segs, &key);
	if (ts) {
		__u64 delta = now - *ts;

		bpf_map_delete_elem(&segs, &key);
		if ((__s64)delta >= 0) {
			hist_record(METRIC_DELIVER, delta);
			evidence_current(ctx, METRIC_DELIVER, delta);
		}
	}
	st = bpf_map_lookup_elem(&socks, &skp);
	if (!st)
		return;
	/* The reader's wait starts when in-order data reaches a queue it has
	 * emptied; data behind unread data waits for that first. */
	rcv_nxt = BPF_CORE_READ(tp, rcv_nxt);
	if (key.seq == rcv_nxt && BPF_CORE_READ(tp, copied_seq) == rcv_nxt) {
		st->rcv_ts = now;
		st->rcv_seq = key.seq;
	}
}

static __always_inline void on_space_adjust(void *ctx, struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct sock_state *st, zero = {};
	__u64 skp = (__u64)sk, id, delta;

	st = bpf_map_lookup_elem(&socks, &skp);
	if (!st) {
		/* Called in recvmsg: current is the reader. */
		id = bpf_get_current_pid_tgid();
		if (follow_traced((__u32)id, id >> 32) &&
		    bpf_map_update_elem(&socks, &skp, &zero, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&socks, &skp))
			hist_miss(); /* socks is full */
		return;
	}
	if (!st->rcv_ts)
		return;
	/* copied_seq has moved past what this recvmsg copied. */
	if ((__s32)(BPF_CORE_READ(tp, copied_seq) - st->rcv_seq) <= 0)
		return;
	delta = bpf_ktime_get_ns() - st->rcv_ts;
	st->rcv_ts = 0;
	hist_record(METRIC_RCVQ, delta);
	evidence_current(ctx, METRIC_RCVQ, delta);
}

static __always_inline void on_set_state(struct sock *sk, int oldstate, int newstate)
{
	struct sock_state zero = {};
	__u64 skp = (__u64)sk, id;
	__u32 port;
	__u8 one = 1;

	if (BPF_CORE_READ(sk, sk_protocol) != IPPROTO_TCP)
		return;
	port = BPF_CORE_READ(sk, __sk_common.skc_num);
	switch (newstate) {
	case TCP_SYN_SENT: /* connect, by the connecting task */
	case TCP_LISTEN:   /* listen, by the listening task */
		id = bpf_get_current_pid_tgid();
		if (!follow_traced((__u32)id, id >> 32))
			return;
		if (bpf_map_update_elem(&socks, &skp, &zero, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&socks, &skp)) {
			hist_miss();
			return;
		}
		if (newstate == TCP_LISTEN)
			bpf_map_update_elem(&listeners, &port, &one, BPF_ANY);
		break;
	case TCP_SYN_RECV: /* a connection to a listener, cloned from it */
		if (oldstate != TCP_LISTEN || !bpf_map_lookup_elem(&listeners, &port))
			return;
		if (bpf_map_update_elem(&socks, &skp, &zero, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&socks, &skp))
			hist_miss();
		break;
	case TCP_CLOSE:
		if (bpf_map_delete_elem(&socks, &skp))
			return; /* not the workload's */
		if (oldstate == TCP_LISTEN)
			bpf_map_delete_elem(&listeners, &port);
		break;
	}
}

TP_PROGS(net_dev_queue, struct sk_buff *skb)
{
	on_dev_queue(skb);
	return 0;
}

TP_PROGS(tcp_probe, struct sock *sk, struct sk_buff *skb)
{
	on_probe(ctx, sk, skb);
	return 0;
}

TP_PROGS(tcp_rcv_space_adjust, struct sock *sk)
{
	on_space_adjust(ctx, sk);
	return 0;
}

TP_PROGS(inet_sock_set_state, struct sock *sk, int oldstate, int newstate)
{
	on_set_state(sk, oldstate, newstate);
	return 0;
}

FOLLOW_PROGS

char LICENSE[] SEC("license") = "Dual BSD/GPL";
