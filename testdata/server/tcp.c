/* tcp-server answers 64-byte requests on TCP with their echo, a thread per
 * connection: the C service of tailgate's server recipe (tcp.yaml).
 *
 *   cc -O2 -pthread -o tcp-server tcp.c                 # base
 *   cc -O2 -pthread -DSLOW_EVERY=40 -o tcp-server tcp.c # head
 *
 * The head spends SLOW_US (default 40) µs in user space, spinning on the
 * clock, on every SLOW_EVERY-th request of a connection: a change of the
 * handler that moves a client's p99 and little else (no syscall more, no
 * sleep). With -DLAYOUT_PAD=N the base's code after pad() sits N bytes
 * further on: another build of the same program (build-servers.sh's
 * layout, an A/A whose sides differ in layout alone). Usage: tcp-server
 * [HOST:]PORT */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SIZE 64
#ifndef SLOW_US
#define SLOW_US 40
#endif

#ifdef SLOW_EVERY
static void spin(long us)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < us * 1000L);
}
#endif

#ifdef LAYOUT_PAD
#define STR_(x) #x
#define STR(x) STR_(x)
/* pad is never called: it only takes LAYOUT_PAD bytes of text, laid out
 * (.text.hot) before the rest of the program's. */
__attribute__((used, noinline, section(".text.hot.pad"))) static void pad(void)
{
	__asm__ volatile(".fill " STR(LAYOUT_PAD) ", 1, 0x90");
}
#endif

/* handle is the request handler: the answer is the request. */
__attribute__((noinline)) static void handle(char *buf, unsigned long n)
{
#ifdef SLOW_EVERY
	if (n % SLOW_EVERY == SLOW_EVERY - 1)
		spin(SLOW_US);
#else
	(void)n;
#endif
	(void)buf;
}

static void *serve(void *arg)
{
	int fd = (int)(long)arg;
	char buf[SIZE];
	unsigned long n;

	for (n = 0;; n++) {
		size_t got = 0;
		while (got < SIZE) {
			ssize_t r = read(fd, buf + got, SIZE - got);
			if (r <= 0)
				goto out;
			got += r;
		}
		handle(buf, n);
		if (write(fd, buf, SIZE) != SIZE)
			break;
	}
out:
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	char *port = argc > 1 ? argv[1] : "7081", *colon;
	int ln, one = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: tcp-server [HOST:]PORT\n");
		return 2;
	}
	if ((colon = strrchr(port, ':'))) {
		*colon = 0;
		if (inet_pton(AF_INET, port, &sa.sin_addr) != 1) {
			fprintf(stderr, "tcp-server: bad host %s\n", port);
			return 2;
		}
		port = colon + 1;
	}
	sa.sin_port = htons(atoi(port));
	ln = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(ln, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ln < 0 || bind(ln, (struct sockaddr *)&sa, sizeof(sa)) || listen(ln, 128)) {
		perror("tcp-server: listen");
		return 1;
	}
	for (;;) {
		pthread_t t;
		int fd = accept(ln, NULL, NULL);

		if (fd < 0) {
			if (errno == EINTR)
				continue;
			perror("tcp-server: accept");
			return 1;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (pthread_create(&t, NULL, serve, (void *)(long)fd)) {
			close(fd);
			continue;
		}
		pthread_detach(t);
	}
}
