/*
 * exec_ttl in direct mode. The server cannot answer a client it never saw, so when a
 * request runs past exec_ttl it writes that request's start time into the page it shares
 * with this worker (struct direct_stats, expire) and sends SIGXCPU; this handler then
 * answers the client 504, as the front would (and 502 to the requests a Fiber worker runs
 * beside it, as the front answers a killed worker's other jobs), and ends the worker, which
 * the server would kill a second later anyway.
 *
 * It answers only when that is safe from a signal handler and correct for the client: the
 * request the server timed is still running (its start time matches), and nothing of its
 * answer, nor of an earlier pipelined one, waits unwritten or went out (the handler
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
#define DIED_BODY "the worker died while handling the request\n"
#define HEAD(status, len) \
	"HTTP/1.1 " status "\r\nServer: ferry\r\nContent-Type: text/plain; charset=utf-8\r\n" \
	"X-Content-Type-Options: nosniff\r\nConnection: close\r\nContent-Length: " len "\r\n\r\n"
#define EXPIRED_HEAD HEAD("504 Gateway Timeout", "30")
#define DIED_HEAD HEAD("502 Bad Gateway", "43")

/*
 * The requests that may still be answered from the handler: their connection, whether they
 * are HEAD, and when they started (ms). A sequential worker uses one slot; a Fiber worker
 * one per request in flight, up to SLOTS (past them, a request's connection just closes).
 */
#define SLOTS 256
static struct {
	volatile sig_atomic_t fd; /* -1: free */
	volatile sig_atomic_t head;
	volatile uint64_t since;
} slots[SLOTS];
static volatile sig_atomic_t used; /* slots [0, used) may be taken */

static void answer(int fd, bool head, const char *h, size_t hlen, const char *whole, size_t wlen)
{
	/* nothing was written to it for this request: the send buffer takes a small answer whole */
	ssize_t n = head ? write(fd, h, hlen) : write(fd, whole, wlen);
	(void) n;
	shutdown(fd, SHUT_WR);
}

static void on_expired(int sig)
{
	volatile struct direct_stats *stats = D.stats;
	uint64_t expired = stats ? stats->expire : 0;
	static const char eh[] = EXPIRED_HEAD, ew[] = EXPIRED_HEAD EXPIRED_BODY;
	static const char dh[] = DIED_HEAD, dw[] = DIED_HEAD DIED_BODY;
	for (sig_atomic_t i = 0; i < used; i++) {
		int fd = slots[i].fd;
		if (fd < 0) {
			continue;
		}
		if (expired != 0 && slots[i].since == expired) {
			answer(fd, slots[i].head, eh, sizeof(eh) - 1, ew, sizeof(ew) - 1);
		} else {
			/* beside it in a Fiber worker: ended with it, as the front answers a killed worker's other jobs */
			answer(fd, slots[i].head, dh, sizeof(dh) - 1, dw, sizeof(dw) - 1);
		}
	}
	_exit(EXPIRED_EXIT);
}

void ferry_direct_ttl_install(void)
{
	for (int i = 0; i < SLOTS; i++) {
		slots[i].fd = -1;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_expired;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGXCPU, &sa, NULL);
}

void ferry_direct_ttl_arm(direct_conn *c, uint64_t since)
{
	ferry_direct_ttl_disarm(c);
	if (!D.stats || direct_out_pending(c) || c->stream != STREAM_NONE) {
		return; /* an earlier answer waits unwritten: nothing may go before it */
	}
	for (int i = 0; i < SLOTS; i++) {
		if (slots[i].fd < 0) {
			slots[i].since = since;
			slots[i].head = c->head_request;
			slots[i].fd = c->fd; /* last: the handler reads a slot whole once fd is set */
			if (i >= used) {
				used = i + 1;
			}
			c->ttl_slot = i + 1;
			return;
		}
	}
}

void ferry_direct_ttl_disarm(direct_conn *c)
{
	if (c && c->ttl_slot) {
		slots[c->ttl_slot - 1].fd = -1;
		c->ttl_slot = 0;
	}
}

/* A part of a streamed answer went out: exec_ttl times a stream between its parts, as the front does. */
void ferry_direct_ttl_progress(direct_conn *c)
{
	if (!D.stats || !D.stats->busy_since) {
		return;
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t now = (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
	if (D.fibers) {
		c->job_since = now;
		direct_fiber_publish_busy(); /* the oldest of those in flight */
	} else {
		D.stats->busy_since = now;
	}
}
