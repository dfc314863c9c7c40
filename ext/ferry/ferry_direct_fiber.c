/*
 * Direct mode with pool.fibers (docs/direct.md): the event loop of ferry_direct.c, run a
 * step at a time from php/worker's FiberRunner (Internal/Native/DirectFibers.php) instead
 * of owning the process. The worker's epoll set is one more readable stream on PHP's loop;
 * when it is readable PHP calls Ferry\Ext\direct_poll(), which accepts, reads, expires and
 * answers what C answers itself exactly as direct_serve() does, and hands back every whole
 * request as a job [id, context, body] for a Fiber of its own.
 *
 * A connection whose request runs in PHP is pinned: nothing more of it is read (HTTP/1.1
 * answers in order), and no timeout closes it while its handler runs. It is only watched
 * for its client leaving. Answers find their connection by job id (direct_answer_to(),
 * ferry_direct_fiber_answer.c), as several are in flight at once; the id's top bit tells
 * them from the relay's jobs, whose answers go on to the server. direct_done() unpins a
 * connection once its job has ended, and the next poll serves what the client sent meanwhile.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include <errno.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "php.h"
#include "ferry_direct_int.h"
#include "ferry_direct_log.h"
#include "ferry_frame.h"
#include "ferry_loop.h"

#define POLL_DRAINED 1 /* stopping, and no connection is left */
#define POLL_SERVED 2  /* max_jobs requests served: the worker asks to be retired */

static char tag_timer;

void direct_fiber_push(direct_conn ***list, size_t *n, size_t *cap, direct_conn *c)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		*list = perealloc(*list, *cap * sizeof(direct_conn *), 1);
	}
	(*list)[(*n)++] = c;
}

bool direct_fiber_drop(direct_conn **list, size_t *n, direct_conn *c)
{
	for (size_t i = 0; i < *n; i++) {
		if (list[i] == c) {
			list[i] = list[--*n];
			return true;
		}
	}
	return false;
}

static uint64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/* exec_ttl times the oldest request running: the server kills the worker when it runs too long. */
void direct_fiber_publish_busy(void)
{
	if (!D.stats) {
		return;
	}
	uint64_t oldest = 0;
	for (size_t i = 0; i < D.pinned_n; i++) {
		if (oldest == 0 || D.pinned[i]->job_since < oldest) {
			oldest = D.pinned[i]->job_since;
		}
	}
	D.stats->busy_since = oldest;
	D.stats->requests = (uint64_t) D.served;
}

void direct_fiber_hand(direct_conn *c, const ferry_http_request *r, const char *remote, const char *host, size_t host_len,
	bool https, const direct_form *form, zval *cookies, zend_string *body, uint32_t id)
{
	/* The PHP path reads its cookies from the context, as for a job direct_serve() declines. */
	smart_str full = {0};
	ferry_direct_context(&full, r, remote, host, host_len, https, form, cookies);
	smart_str_0(&full);
	if (Z_TYPE(D.batch) != IS_ARRAY) {
		array_init(&D.batch);
	}
	zval job, v;
	array_init_size(&job, 3);
	ZVAL_LONG(&v, id);
	zend_hash_next_index_insert_new(Z_ARRVAL(job), &v);
	ZVAL_STR(&v, full.s);
	zend_hash_next_index_insert_new(Z_ARRVAL(job), &v);
	ZVAL_STR_COPY(&v, body);
	zend_hash_next_index_insert_new(Z_ARRVAL(job), &v);
	zend_hash_next_index_insert_new(Z_ARRVAL(D.batch), &job);
	c->job = id;
	c->job_answered = false;
	c->job_since = wall_ms();
	c->deadline = 0; /* its handler's time is exec_ttl's to judge, not a read timeout's */
	direct_fiber_watch(c);
	direct_fiber_push(&D.pinned, &D.pinned_n, &D.pinned_cap, c);
	if (D.stats && D.stats->busy_since == 0) {
		D.stats->busy_since = c->job_since;
	}
	ferry_direct_ttl_arm(c, c->job_since);
}

/*
 * A pinned connection is not read (its next request waits in the kernel): it is watched
 * for its client leaving (once: the event would repeat) and, while its answer has bytes
 * left, for the client taking them.
 */
void direct_fiber_watch(direct_conn *c)
{
	direct_conn_events(c, (c->eof ? 0 : EPOLLRDHUP) | (direct_out_pending(c) ? EPOLLOUT : 0));
}

void direct_fiber_forget(direct_conn *c)
{
	direct_fiber_drop(D.resumed, &D.resumed_n, c);
	if (c->job && direct_fiber_drop(D.pinned, &D.pinned_n, c)) {
		c->job = 0;
		direct_fiber_publish_busy();
	}
}

direct_conn *direct_fiber_pinned(uint32_t id)
{
	for (size_t i = 0; i < D.pinned_n; i++) {
		if (D.pinned[i]->job == id) {
			return D.pinned[i];
		}
	}
	return NULL;
}

/* The time the timer is set for (0: unset); forgotten once it has fired. */
static uint64_t timer_armed;

/*
 * Due at the next connection deadline, or when the access log's buffered lines are. Called
 * after every poll and every batch of answers: the system call only when the time moved.
 */
void direct_fiber_arm_timer(void)
{
	struct itimerspec at = {0};
	uint64_t due = D.next_deadline, lines = ferry_dlog_due();
	if (lines && (due == 0 || lines < due)) {
		due = lines;
	}
	if (due == timer_armed) {
		return;
	}
	timer_armed = due;
	if (due) {
		at.it_value.tv_sec = (time_t) (due / 1000);
		at.it_value.tv_nsec = (long) (due % 1000) * 1000000;
	}
	timerfd_settime(D.timer, TFD_TIMER_ABSTIME, &at, NULL);
}

/* The first call: the loop's state, without the relay, which PHP's loop reads itself. */
static bool fiber_setup(zend_long lfd, HashTable *limits)
{
	if (D.ready) {
		return true;
	}
	D.fibers = true;
	if (!direct_setup(lfd, -1, limits)) {
		return false;
	}
	D.timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &tag_timer};
	if (D.timer < 0 || epoll_ctl(D.epfd, EPOLL_CTL_ADD, D.timer, &ev) < 0) {
		zend_throw_error(NULL, "Ferry\\Ext\\direct_poll(): timerfd: %s", strerror(errno));
		return false;
	}
	if (D.lfd >= 0) {
		direct_watch_listener(true);
	}
	return true;
}

static size_t handed(void)
{
	return Z_TYPE(D.batch) == IS_ARRAY ? zend_hash_num_elements(Z_ARRVAL(D.batch)) : 0;
}

/* Stopping: queued connections are taken, then none; idle ones get direct_serve()'s grace. */
static void drain_sweep(void)
{
	if (!D.draining) {
		D.draining = true;
		if (D.lfd >= 0) {
			direct_accept_some(SIZE_MAX);
			direct_watch_listener(false);
			D.lfd = -1;
		}
		for (size_t i = 0; i < D.pinned_n; i++) {
			D.pinned[i]->close_after = true; /* their answers say Connection: close */
		}
	}
	for (direct_conn *c = D.conns, *next; c; c = next) {
		next = c->next;
		if (c->job || c->phase == CONN_LINGER || direct_out_pending(c) || !direct_read_some(c)) {
			continue;
		}
		if (c->in_len == 0 && !c->started && !c->graced) {
			c->graced = true;
			direct_set_deadline(c, MIN(D.limits.idle_ms ? D.limits.idle_ms : DRAIN_GRACE_MS, DRAIN_GRACE_MS));
		} else if (c->in_len > 0) {
			direct_serve_one(c);
		}
	}
}

/* A running request's client left before its answer: PHP may cancel the job (pool.fiber_io). */
static void client_gone(direct_conn *c)
{
	if (c->job_answered) {
		return;
	}
	if (Z_TYPE(D.gone) != IS_ARRAY) {
		array_init(&D.gone);
	}
	zval v;
	ZVAL_LONG(&v, c->job);
	zend_hash_next_index_insert_new(Z_ARRVAL(D.gone), &v);
}

static void on_event(direct_conn *c, uint32_t events, size_t room)
{
	if (c->job) {
		/* running in PHP: what is news is its client leaving, or taking more of its answer */
		if (events & (EPOLLERR | EPOLLHUP)) {
			client_gone(c);
			direct_conn_close(c);
			return;
		}
		if ((events & EPOLLRDHUP) && !c->eof) {
			c->eof = true;
			client_gone(c);
		}
		if ((events & EPOLLOUT) && !direct_flush_some(c)) {
			direct_conn_close(c);
			return;
		}
		direct_fiber_watch(c);
		return;
	}
	if (events & (EPOLLERR | EPOLLHUP)) {
		direct_conn_close(c);
		return;
	}
	if (c->phase == CONN_LINGER) {
		direct_linger(c);
		return;
	}
	if (c->phase == CONN_WRITING) {
		if (!direct_settle(c) || c->phase == CONN_WRITING || c->phase == CONN_LINGER) {
			return;
		}
	} else if (handed() >= room) {
		return; /* no free Fiber slot: its bytes wait in the kernel, and epoll says so again */
	} else if (!direct_read_some(c)) {
		return;
	}
	if (direct_serve_one(c) == STEP_MORE && (events & EPOLLRDHUP) && !c->job && c->in_len == 0 && !direct_out_pending(c)) {
		direct_conn_close(c); /* the client closed its side between requests */
	}
}

/* Ferry\Ext\direct_poll_fd(int $fd, array $limits): int, the epoll set for PHP's loop to watch. */
ZEND_FUNCTION(ferry_direct_poll_fd)
{
	zend_long lfd;
	zval *limits;

	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_LONG(lfd)
		Z_PARAM_ARRAY(limits)
	ZEND_PARSE_PARAMETERS_END();

	if (D.ready && !D.fibers) {
		zend_throw_error(NULL, "Ferry\\Ext\\direct_poll_fd(): direct_serve() runs this worker");
		RETURN_THROWS();
	}
	if (!fiber_setup(lfd, Z_ARRVAL_P(limits))) {
		RETURN_THROWS();
	}
	RETURN_LONG(D.epfd);
}

/*
 * Ferry\Ext\direct_poll(bool $drain, int $room): array{list<array{int, string, string}>, int, list<int>}:
 * what happened since the last call, without waiting; at most about $room new requests
 * (one more for each connection answered since, whose slot PHP counted free already).
 */
ZEND_FUNCTION(ferry_direct_poll)
{
	bool drain;
	zend_long room;

	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_BOOL(drain)
		Z_PARAM_LONG(room)
	ZEND_PARSE_PARAMETERS_END();

	if (!D.ready || !D.fibers) {
		zend_throw_error(NULL, "Ferry\\Ext\\direct_poll(): call direct_poll_fd() first");
		RETURN_THROWS();
	}
	size_t most = room > 0 ? (size_t) room : 0;
	/* Answered connections first: their pipelined requests were sent before anything newer. */
	while (D.resumed_n > 0) {
		direct_conn *c = D.resumed[--D.resumed_n];
		if (c->eof) {
			direct_conn_events(c, EPOLLOUT);
		} else {
			direct_conn_events(c, EPOLLIN | EPOLLRDHUP);
		}
		direct_serve_one(c);
	}
	if (drain) {
		drain_sweep();
	}
	uint64_t tick;
	if (read(D.timer, &tick, sizeof(tick)) == sizeof(tick)) {
		timer_armed = 0; /* it fired: set again below, whatever is due next */
	}
	direct_expire();
	struct epoll_event events[64];
	int n = epoll_wait(D.epfd, events, 64, 0);
	for (int i = 0; i < n; i++) {
		void *tag = events[i].data.ptr;
		if (tag == &tag_timer) {
			continue;
		}
		if (tag == &ferry_direct_tag_listen) {
			direct_accept_some(1);
			continue;
		}
		on_event(tag, events[i].events, most);
	}
	direct_expire();
	direct_fiber_arm_timer();
	zend_long flags = 0;
	if (drain && D.count == 0) {
		flags |= POLL_DRAINED;
	}
	if (D.max_jobs && D.served >= D.max_jobs && !drain) {
		D.max_jobs = 0; /* said once: the server retires this worker */
		flags |= POLL_SERVED;
	}
	if (D.stats) {
		D.stats->requests = (uint64_t) D.served;
	}
	zval jobs, v;
	if (Z_TYPE(D.batch) == IS_ARRAY) {
		ZVAL_COPY_VALUE(&jobs, &D.batch);
		ZVAL_UNDEF(&D.batch);
	} else {
		array_init(&jobs);
	}
	zval gone;
	if (Z_TYPE(D.gone) == IS_ARRAY) {
		ZVAL_COPY_VALUE(&gone, &D.gone);
		ZVAL_UNDEF(&D.gone);
	} else {
		array_init(&gone);
	}
	array_init_size(return_value, 3);
	zend_hash_next_index_insert_new(Z_ARRVAL_P(return_value), &jobs);
	ZVAL_LONG(&v, flags);
	zend_hash_next_index_insert_new(Z_ARRVAL_P(return_value), &v);
	zend_hash_next_index_insert_new(Z_ARRVAL_P(return_value), &gone);
}
