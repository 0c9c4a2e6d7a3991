//go:build ignore

/* request.bpf.c: each request a socket of the workload serves, from the
 * read that brings it in to the write of its answer, so that any program
 * is measured the same way, a Go program (whose netpoller reads and
 * writes a connection with read(2) and write(2)) as a C one. Two ways to
 * see them, the same requests:
 *
 *   at the socket layer (tp_btf sock_recv_length and sock_send_length,
 *       Linux 6.3 and later): only a socket's receive and send run a
 *       program, and no other syscall of the machine pays for the tracer;
 *   at the syscall tracepoint (raw_syscalls sys_exit), elsewhere: every
 *       syscall of the machine takes the traced slow path and runs the
 *       program once.
 *
 *   request.server  the end of the first receive of a socket that returns
 *       data after the last answer on it (or after it was accepted) to the
 *       end of the next send on the same socket that sends any: the
 *       request's time in the server, as its clients feel it less the
 *       network both ways.
 *   request.queue  (at the socket layer, when asked: sk_data_ready,
 *       Linux 6.4 and later) the kernel's notice that data reached a
 *       server's socket with none waiting to the end of the receive that
 *       opens the request: its wait in the receive queue, the server's
 *       wakeup and its way back to the read. A request whose data came
 *       before its socket was first seen has none.
 *
 * At the syscall tracepoint a connection is keyed by (process, fd); at
 * the socket layer its state is the socket's own storage, freed with it:
 * a request read by one thread and answered by another (a Go server's
 * goroutines move between threads) is one request. Only server ends
 * count. At the syscall tracepoint: an fd an accept returned, or one
 * whose first call seen is a read that returned data and whose file is a
 * socket (a connection accepted before the tracer attached, or by a
 * parent before a fork); an fd connected, or first seen written, is a
 * client's (a call to a database) and counts nothing; so do pipes, files
 * and eventfds. At the socket layer, which sees no accept or connect: a
 * socket whose first operation seen is a receive that returned data (a
 * server that speaks first is not counted). Reads after the first (a
 * request read in parts, or the next of a pipelined batch) do not restart
 * the request; writes after the first (an answer written in parts) do not
 * end another: a batch of pipelined requests read at once counts one.
 * close, dup2 and dup3 forget the fd they free.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "hist.bpf.h"
#include "follow.bpf.h"
#include "evidence.bpf.h"
#include "sample.bpf.h"
#include "request.h"

#define MAX_CONNS 65536
#define S_IFMT 00170000
#define S_IFSOCK 0140000

/* Set at load when the programs attached are the socket layer's. */
const volatile bool at_sockets = false;
/* Set at load when request.queue is measured (at the socket layer). */
const volatile bool queue_on = false;
/* Set at each load, a value no earlier load of the same maps had. */
__u64 conn_gen = 0;

/* targ_op[nr] is the OP_ of syscall nr, 0 if it is none of them. */
const volatile __u8 targ_op[REQUEST_NR_MAX] = {};

/* The filter's verdict, kept per task: traced, as of follow_gen gen. The
 * hot path needs no lookup besides this one, as in the syscall tracer. */
struct filter {
	__u64 gen;
	__u64 traced;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct filter);
} filter SEC(".maps");

struct conn_key {
	__u32 tgid;
	__s32 fd;
};

#define ROLE_OTHER 0  /* a client's socket, or no socket: never counted */
#define ROLE_SERVER 1

struct conn {
	__u64 start; /* exit of the request's first read; 0: no request open */
	__u64 gen; /* the conn_gen it was last seen in */
	/* At the syscall tracepoint: the inode number of the fd's socket (0:
	 * no socket), which tells a later load whether the fd is the one it
	 * was: its close may have gone unseen between two tracers. */
	__u64 ino;
	/* At the socket layer, with queue_on: when data reached the socket
	 * with none waiting (sk_data_ready); 0: none since the last receive. */
	__u64 ready;
	__u32 role;
	/* At the syscall tracepoint: the open request got a stack sample
	 * (sample.bpf.h). At the socket layer: the thread that opened it,
	 * whose task storage says whether it did. */
	__u32 sampled;
};

/* The fds of the workload's processes seen so far. LRU: an fd whose close
 * was not seen (close_range, exec) is forgotten in time; a server's fd
 * forgotten is found again at its next read. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_CONNS);
	__type(key, struct conn_key);
	__type(value, struct conn);
} conns SEC(".maps");

/* The workload's sockets seen at the socket layer, each in its own
 * storage: one lookup from the socket, no hash, and no entry outlives its
 * socket. A socket outlives a tracer, though (tracers loaded once serve
 * many, tracing/loaded.go): a socket's role holds, but a request it had
 * open belongs to a tracer gone, which the next cannot end. conn_gen,
 * set at each load, dates them. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct conn);
} sock_conns SEC(".maps");

extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym;
extern void bpf_task_release(struct task_struct *p) __ksym;

HIST_MAPS;

/* socket_ino returns the inode number of fd of the current task if it
 * is a socket, else 0. Socket inode numbers are not reused soon, as the
 * addresses of freed files would be. */
static __always_inline __u64 socket_ino(__s32 fd)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds, *f = NULL;
	umode_t mode;

	if (!fdt || fd < 0 || (__u32)fd >= BPF_CORE_READ(fdt, max_fds))
		return 0;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return 0;
	mode = BPF_CORE_READ(f, f_inode, i_mode);
	if ((mode & S_IFMT) != S_IFSOCK)
		return 0;
	return BPF_CORE_READ(f, f_inode, i_ino);
}

/* traced reports whether the current task is the workload's, from the
 * verdict cached in its task storage. */
static __always_inline bool traced(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 id_tgid, gen = follow_gen;
	struct filter *f;

	f = bpf_task_storage_get(&filter, task, 0, 0);
	if (f && f->gen == gen)
		return f->traced;
	id_tgid = bpf_get_current_pid_tgid();
	if (!follow_traced((__u32)id_tgid, id_tgid >> 32)) {
		if (f) {
			f->traced = 0;
			f->gen = gen;
		}
		return false;
	}
	f = bpf_task_storage_get(&filter, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!f)
		return false;
	f->traced = 1;
	f->gen = gen;
	return true;
}

/* sock_closed ends the sampler's record of c's request on the thread
 * that opened it (c->sampled), which may be another than this one, and
 * reports whether the request got a sample: at the socket layer the
 * sampler finds a request by its thread alone (on_sample). */
static __always_inline bool sock_closed(struct conn *c)
{
	struct task_struct *task;
	struct sample_open *o;
	bool sampled = false;

	if (!sample_on)
		return false;
	if (c->sampled == (__u32)bpf_get_current_pid_tgid()) {
		o = bpf_task_storage_get(&sample_task, bpf_get_current_task_btf(), 0, 0);
		if (o && o->start == c->start) {
			sampled = o->sampled;
			o->start = 0;
		}
		return sampled;
	}
	task = bpf_task_from_pid(c->sampled);
	if (!task)
		return false;
	o = bpf_task_storage_get(&sample_task, task, 0, 0);
	if (o && o->start == c->start) {
		sampled = o->sampled;
		o->start = 0;
	}
	bpf_task_release(task);
	return sampled;
}

/* request_opened starts c's request now, if c is a server's end with none
 * open; tag and ref name it to the sampler, and at the socket layer
 * (sockets) the thread that opens it does. */
static __always_inline void request_opened(struct conn *c, __s32 tag, __u64 ref, bool sockets)
{
	if (c->role == ROLE_SERVER && !c->start) {
		c->start = bpf_ktime_get_ns();
		c->sampled = 0;
		if (sockets)
			tag = c->sampled = (__u32)bpf_get_current_pid_tgid();
		sample_opened(tag, ref, c->start);
	}
}

/* request_ended ends c's open request now, if it has one, and records
 * it; tag names it to the sampler (at the socket layer the thread that
 * opened it does). */
static __always_inline void request_ended(void *ctx, struct conn *c, __s32 tag, bool sockets)
{
	bool sampled;
	__u64 v;

	if (!c->start)
		return;
	v = bpf_ktime_get_ns() - c->start;
	sampled = c->sampled;
	if (sockets) {
		sampled = sock_closed(c);
		tag = c->sampled;
	}
	if (sampled)
		sample_end(tag, c->start, v);
	c->start = 0;
	hist_record(METRIC_SERVER, v);
	evidence_current(ctx, METRIC_SERVER, v);
}

/* known_fd returns what the tracer knows of key's fd, or NULL. An entry
 * first seen since another tracer loaded these maps is kept only if the
 * fd is still the same socket, since a close between the two went
 * unseen; its open request was the other tracer's. */
static __always_inline struct conn *known_fd(struct conn_key *key)
{
	struct conn *c = bpf_map_lookup_elem(&conns, key);

	if (!c || c->gen == conn_gen)
		return c;
	if (socket_ino(key->fd) != c->ino) {
		bpf_map_delete_elem(&conns, key);
		return NULL;
	}
	c->gen = conn_gen;
	c->start = 0;
	return c;
}

/* on_exit sees every syscall at its exit, where the registers still hold
 * its number and arguments: a read that began before the tracer attached
 * (a blocking server waiting for its next request) is seen whole, and
 * one program run a syscall is all it costs. */
static __always_inline int on_exit(void *ctx, struct pt_regs *regs, long ret, bool btf)
{
	struct conn *c, fresh = {};
	struct conn_key key;
	__u64 nr;
	__u8 op;

	/* Every syscall of the machine passes here: tp_btf reads its trusted
	 * registers directly, a load rather than a helper call. */
	nr = btf ? regs->orig_ax : BPF_CORE_READ(regs, orig_ax);
	if (nr >= REQUEST_NR_MAX)
		return 0;
	op = targ_op[nr];
	if (!op || !traced())
		return 0;
	key.tgid = bpf_get_current_pid_tgid() >> 32;
	if (op == OP_DUP)
		key.fd = (__s32)(btf ? regs->si : BPF_CORE_READ(regs, si));
	else
		key.fd = (__s32)(btf ? regs->di : BPF_CORE_READ(regs, di));
	fresh.gen = conn_gen;
	switch (op) {
	case OP_READ:
		if (ret <= 0)
			return 0; /* EAGAIN before a Go read parks, or the end */
		c = known_fd(&key);
		if (c) {
			request_opened(c, key.fd, key.fd, false);
			return 0;
		}
		/* First seen reading: a server's end if it is a socket. */
		fresh.ino = socket_ino(key.fd);
		if (fresh.ino) {
			fresh.role = ROLE_SERVER;
			request_opened(&fresh, key.fd, key.fd, false);
		}
		bpf_map_update_elem(&conns, &key, &fresh, BPF_ANY);
		return 0;
	case OP_WRITE:
		if (ret <= 0)
			return 0;
		c = known_fd(&key);
		if (!c) {
			/* First seen writing: a client's end, or no socket. */
			fresh.ino = socket_ino(key.fd);
			bpf_map_update_elem(&conns, &key, &fresh, BPF_NOEXIST);
			return 0;
		}
		request_ended(ctx, c, key.fd, false);
		return 0;
	case OP_ACCEPT:
		if (ret < 0)
			return 0;
		key.fd = (__s32)ret;
		fresh.role = ROLE_SERVER;
		fresh.ino = socket_ino(key.fd);
		bpf_map_update_elem(&conns, &key, &fresh, BPF_ANY);
		return 0;
	case OP_CONNECT:
		/* A client's end, whether it connected at once or in the
		 * background (EINPROGRESS); a failed connect's fd is closed or
		 * connected again. */
		fresh.ino = socket_ino(key.fd);
		bpf_map_update_elem(&conns, &key, &fresh, BPF_ANY);
		return 0;
	case OP_CLOSE:
	case OP_DUP:
		if (ret < 0)
			return 0;
		bpf_map_delete_elem(&conns, &key);
		return 0;
	}
	return 0;
}

/* on_sock sees a socket's receive or send end (ret: bytes, or an error),
 * at the socket layer. */
static __always_inline int on_sock(void *ctx, struct sock *sk, int ret, bool send)
{
	struct conn *c, fresh = {};
	bool opened;

	if (ret <= 0 || !traced())
		return 0; /* EAGAIN before a Go read parks, or the end */
	c = bpf_sk_storage_get(&sock_conns, sk, 0, 0);
	if (c && c->gen != conn_gen) {
		c->gen = conn_gen;
		c->start = 0;
		c->ready = 0;
	}
	fresh.gen = conn_gen;
	if (!send) {
		if (!c) {
			/* First seen receiving: a server's end. */
			fresh.role = ROLE_SERVER;
			c = bpf_sk_storage_get(&sock_conns, sk, &fresh, BPF_SK_STORAGE_GET_F_CREATE);
			if (!c)
				return 0;
		}
		opened = c->role == ROLE_SERVER && !c->start;
		request_opened(c, 0, 0, true);
		if (queue_on && c->ready) {
			if (opened && c->ready <= c->start)
				hist_record(METRIC_QUEUE, c->start - c->ready);
			c->ready = 0;
		}
		return 0;
	}
	if (!c) {
		/* First seen sending: a client's end. */
		bpf_sk_storage_get(&sock_conns, sk, &fresh, BPF_SK_STORAGE_GET_F_CREATE);
		return 0;
	}
	request_ended(ctx, c, 0, true);
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(sock_recv_btf, struct sock *sk, int ret, int flags)
{
	return on_sock(ctx, sk, ret, false);
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(sock_send_btf, struct sock *sk, int ret, int flags)
{
	return on_sock(ctx, sk, ret, true);
}

/* Data reached a socket: in softirq, on any task, so the socket's own
 * storage is the filter (only the workload's sockets have it, and only
 * its server ends count). */
SEC("tp_btf/sk_data_ready")
int BPF_PROG(sock_ready_btf, const struct sock *sk)
{
	struct conn *c;

	c = bpf_sk_storage_get(&sock_conns, (struct sock *)sk, 0, 0);
	if (c && c->role == ROLE_SERVER && c->gen == conn_gen && !c->ready)
		c->ready = bpf_ktime_get_ns();
	return 0;
}

/* Written out, not with TP_PROGS: tp_btf reads the registers directly. */
SEC("tp_btf/sys_exit")
int BPF_PROG(sys_exit_btf, struct pt_regs *regs, long ret)
{
	return on_exit(ctx, regs, ret, true);
}

SEC("raw_tp/sys_exit")
int BPF_PROG(sys_exit_raw, struct pt_regs *regs, long ret)
{
	return on_exit(ctx, regs, ret, false);
}

/* on_sample sends the stacks of a task in the middle of a request: the
 * request its task storage names, if that is still open on its socket. */
static __always_inline int on_sample(void *ctx)
{
	struct sample_open *o = sample_current();
	struct conn_key key;
	struct conn *c;

	if (!o)
		return 0;
	if (at_sockets) {
		/* The request's end clears o, on whichever thread it ends. */
		o->sampled = 1;
		sample_take(ctx, o);
		return 0;
	}
	key.tgid = bpf_get_current_pid_tgid() >> 32;
	key.fd = o->tag;
	c = bpf_map_lookup_elem(&conns, &key);
	if (!c || c->start != o->start) {
		o->start = 0; /* answered, maybe by another thread */
		return 0;
	}
	c->sampled = 1;
	sample_take(ctx, o);
	return 0;
}

/* The perf event's program, once per variant: the loader keeps the
 * programs of the variant it attaches. */
SEC("perf_event")
int sample_btf(struct bpf_perf_event_data *ctx)
{
	return on_sample(ctx);
}

SEC("perf_event")
int sample_raw(struct bpf_perf_event_data *ctx)
{
	return on_sample(ctx);
}

FOLLOW_PROGS

char LICENSE[] SEC("license") = "Dual BSD/GPL";
