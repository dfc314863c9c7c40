/*
 * exec_ttl in direct mode. The server cannot answer a client it never saw, so when a
 * request runs past exec_ttl it writes that request's start time into the page it shares
 * with this worker (struct direct_stats, expire) and sends SIGXCPU; this handler then
 * answers the client 504, as the front would, and ends the worker, which the server would
 * kill a second later anyway.
 *
 * It answers only when that is safe from a signal handler and correct for the client: the
 * request the server timed is still the one running (its start time matches), and nothing
 * of its answer, nor of an earlier pipelined one, waits unwritten or went out (the handler
 * writes a whole answer first on the socket, or nothing). Everything it uses is prepared
 * before the request runs: a handler may only write(), shutdown() and _exit().
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include <signal.h>
#include <time.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "php.h"
#include "ferry_direct.h"
#include "ferry_direct_int.h"

/* The exit status a worker ended this way has (the server already knows why). */
#define EXPIRED_EXIT 70

#define EXPIRED_BODY "the request exceeded exec_ttl\n"
#define EXPIRED_HEAD \
	"HTTP/1.1 504 Gateway Timeout\r\nServer: ferry\r\nContent-Type: text/plain; charset=utf-8\r\n" \
	"X-Content-Type-Options: nosniff\r\nConnection: close\r\nContent-Length: 30\r\n\r\n"

/* the armed request's connection (-1: none), whether it is HEAD, and its start (ms) */
static volatile sig_atomic_t armed_fd = -1;
static volatile sig_atomic_t armed_head;
static volatile uint64_t armed_since;

static void on_expired(int sig)
{
	int fd = armed_fd;
	volatile struct direct_stats *stats = D.stats;
	if (fd >= 0 && stats && stats->expire != 0 && stats->expire == armed_since) {
		static const char head[] = EXPIRED_HEAD, whole[] = EXPIRED_HEAD EXPIRED_BODY;
		/* nothing was written to it for this request: the send buffer takes a small answer whole */
		ssize_t n = armed_head ? write(fd, head, sizeof(head) - 1) : write(fd, whole, sizeof(whole) - 1);
		(void) n;
		shutdown(fd, SHUT_WR);
	}
	_exit(EXPIRED_EXIT);
}

void ferry_direct_ttl_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_expired;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGXCPU, &sa, NULL);
}

void ferry_direct_ttl_arm(direct_conn *c, uint64_t since)
{
	if (direct_out_pending(c) || c->stream != STREAM_NONE) {
		armed_fd = -1;
		return;
	}
	armed_since = since;
	armed_head = c->head_request;
	armed_fd = c->fd;
}

void ferry_direct_ttl_disarm(void)
{
	armed_fd = -1;
}

/* A part of a streamed answer went out: exec_ttl times a stream between its parts, as the front does. */
void ferry_direct_ttl_progress(void)
{
	if (D.stats && D.stats->busy_since) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		D.stats->busy_since = (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
	}
}
