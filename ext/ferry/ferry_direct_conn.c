/*
 * One direct-mode connection's life (ferry_direct_int.h): accepted from the shared
 * listening socket, read into its buffer, its answers written (sendfile for file answers),
 * its timeouts, the linger after its last answer, and its close.
 *
 * Past 400 lines: those phases share the connection's state (its buffers, deadline, phase
 * and what it spooled), which only this file and ferry_direct.c's loop change.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "php.h"
#include "ferry_direct_int.h"

uint64_t ferry_direct_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

void direct_set_deadline(direct_conn *c, uint64_t ms)
{
	c->deadline = ms ? ferry_direct_now() + ms : 0;
	if (c->deadline && (D.next_deadline == 0 || c->deadline < D.next_deadline)) {
		D.next_deadline = c->deadline;
	}
}

void direct_watch_listener(bool on)
{
	if (D.lfd < 0 || on == D.listening) {
		return;
	}
	if (on) {
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &ferry_direct_tag_listen};
		if (epoll_ctl(D.epfd, EPOLL_CTL_ADD, D.lfd, &ev) == 0) {
			D.listening = true;
		}
	} else {
		epoll_ctl(D.epfd, EPOLL_CTL_DEL, D.lfd, NULL);
		D.listening = false;
	}
}

/* The files of a multipart body, once its request is answered (the front's multipart.Remove). */
void direct_remove_spooled(direct_conn *c)
{
	if (!c->spooled.s) {
		return;
	}
	for (const char *p = ZSTR_VAL(c->spooled.s), *end = p + ZSTR_LEN(c->spooled.s); p < end; p += strlen(p) + 1) {
		unlink(p);
	}
	smart_str_free(&c->spooled);
}

void ferry_direct_answered(direct_conn *c)
{
	direct_remove_spooled(c);
}

void direct_conn_close(direct_conn *c)
{
	ferry_direct_ttl_disarm(c); /* its descriptor is about to be another's */
	if (D.fibers) {
		direct_fiber_forget(c);
	}
	direct_remove_spooled(c);
	if (ferry_direct_current == c) {
		ferry_direct_current = NULL;
	}
	close(c->fd); /* leaves the epoll set with it */
	if (c->prev) {
		c->prev->next = c->next;
	} else {
		D.conns = c->next;
	}
	if (c->next) {
		c->next->prev = c->prev;
	}
	if (c->file_fd >= 0) {
		close(c->file_fd);
	}
	ferry_dlog_finish(c); /* a client gone while PHP ran its request */
	ferry_dlog_free(c);
	efree(c->in);
	smart_str_free(&c->out);
	efree(c);
	D.count--;
	if (D.stats) {
		D.stats->connections = D.count;
	}
	if (!D.draining && D.lfd >= 0 && D.limits.max_connections && D.count < D.limits.max_connections) {
		direct_watch_listener(true); /* room again */
	}
}

void direct_conn_events(direct_conn *c, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = c};
	epoll_ctl(D.epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

void direct_chunked_reset(direct_conn *c)
{
	memset(&c->chunked, 0, sizeof(c->chunked));
	/* the front reads a trailer section into its header buffer */
	c->chunked.max_trailer = D.limits.http.max_head;
}

/*
 * Takes up to `most` queued connections: one per wake-up while serving (nginx's
 * multi_accept off), all it can while draining. Every idle worker waits on the socket
 * without EPOLLEXCLUSIVE, so a connection wakes them all and each takes one: a burst is
 * shared out. With EPOLLEXCLUSIVE the kernel wakes the worker that waited last, which then
 * takes the whole queue one by one while the others sleep (a worker busy in PHP is not
 * waiting, and is woken by nothing).
 */
void direct_accept_some(size_t most)
{
	for (size_t taken = 0; taken < most && (D.count < D.limits.max_connections || D.limits.max_connections == 0); taken++) {
		struct sockaddr_storage sa;
		socklen_t len = sizeof(sa);
		int fd = accept4(D.lfd, (struct sockaddr *) &sa, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			/* EAGAIN: another worker took it, or none is left; EMFILE and the like: try on the next wake */
			return;
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		direct_conn *c = ecalloc(1, sizeof(direct_conn));
		c->fd = fd;
		c->file_fd = -1;
		direct_chunked_reset(c);
		c->in_cap = READ_SIZE;
		c->in = emalloc(c->in_cap);
		char ip[INET6_ADDRSTRLEN] = "";
		unsigned port = 0;
		if (sa.ss_family == AF_INET) {
			struct sockaddr_in *in4 = (struct sockaddr_in *) &sa;
			inet_ntop(AF_INET, &in4->sin_addr, ip, sizeof(ip));
			port = ntohs(in4->sin_port);
			snprintf(c->remote, sizeof(c->remote), "%s:%u", ip, port);
		} else if (sa.ss_family == AF_INET6) {
			struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) &sa;
			port = ntohs(in6->sin6_port);
			if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
				/* an IPv4 client of a dual-stack socket: named as Go names it, 1.2.3.4:port */
				inet_ntop(AF_INET, &in6->sin6_addr.s6_addr[12], ip, sizeof(ip));
				snprintf(c->remote, sizeof(c->remote), "%s:%u", ip, port);
			} else {
				inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
				snprintf(c->remote, sizeof(c->remote), "[%s]:%u", ip, port);
			}
		}
		c->next = D.conns;
		if (D.conns) {
			D.conns->prev = c;
		}
		D.conns = c;
		D.count++;
		if (D.stats) {
			D.stats->accepted++;
			D.stats->connections = D.count;
		}
		struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = c};
		epoll_ctl(D.epfd, EPOLL_CTL_ADD, fd, &ev);
		/* its first request's head is due within read_header_timeout, as a later one's is once begun */
		direct_set_deadline(c, D.limits.read_header_ms ? D.limits.read_header_ms : D.limits.idle_ms);
	}
	if (D.limits.max_connections && D.count >= D.limits.max_connections) {
		direct_watch_listener(false);
	}
}

/* Writes what it can of c->out without waiting; false when the client is gone. */
bool direct_flush_some(direct_conn *c)
{
	while (c->out.s && c->out_off < ZSTR_LEN(c->out.s)) {
		ssize_t n = send(c->fd, ZSTR_VAL(c->out.s) + c->out_off, ZSTR_LEN(c->out.s) - c->out_off, MSG_NOSIGNAL);
		if (n > 0) {
			c->out_off += (size_t) n;
			continue;
		}
		if (n < 0 && errno == EINTR) {
			continue;
		}
		return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
	}
	if (c->out.s) {
		ZSTR_LEN(c->out.s) = 0;
	}
	c->out_off = 0;
	while (c->file_fd >= 0) {
		ssize_t n = sendfile(c->fd, c->file_fd, &c->file_off, (size_t) MIN(c->file_left, 1 << 20));
		if (n > 0) {
			c->file_left -= (uint64_t) n;
			if (c->file_left == 0) {
				close(c->file_fd);
				c->file_fd = -1;
		direct_chunked_reset(c);
			}
			continue;
		}
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			return true;
		}
		return false; /* the client left, or the file shrank (n == 0): the answer is cut short */
	}
	return true;
}

bool direct_out_pending(direct_conn *c)
{
	return (c->out.s && c->out_off < ZSTR_LEN(c->out.s)) || c->file_fd >= 0;
}

bool ferry_direct_flush_blocking(direct_conn *c, uint64_t write_ms)
{
	uint64_t until = write_ms ? ferry_direct_now() + write_ms : 0;
	while (direct_out_pending(c)) {
		if (!direct_flush_some(c)) {
			return false;
		}
		if (!direct_out_pending(c)) {
			break;
		}
		int wait = -1;
		if (until) {
			uint64_t now = ferry_direct_now();
			if (now >= until) {
				return false;
			}
			wait = (int) (until - now);
		}
		struct pollfd p = {c->fd, POLLOUT, 0};
		if (poll(&p, 1, wait) < 0 && errno != EINTR) {
			return false;
		}
	}
	return true;
}

/* The read buffer holds room for one more read, up to the head limit plus the body limit. */
bool direct_grow_in(direct_conn *c)
{
	if (c->in_cap - c->in_len >= READ_SIZE / 2) {
		return true;
	}
	size_t limit = D.limits.http.max_head + (D.limits.http.max_body ? D.limits.http.max_body : (64 << 20)) + READ_SIZE;
	if (c->in_cap >= limit) {
		return false;
	}
	c->in_cap = MIN(c->in_cap * 2, limit);
	c->in = erealloc(c->in, c->in_cap);
	return true;
}

/* A refusal: its status and the close, as the front answers what it cannot read. */
void direct_refuse(direct_conn *c, int status, const char *why)
{
	c->close_after = true;
	c->head_request = false;
	ferry_direct_fail(c, status, why ? why : "bad request");
	c->in_len = 0;
}

/*
 * The client shut its side before its request was whole: a 400, as the front answers a
 * request cut short, unless all it left were the empty lines a request may follow.
 */
step direct_cut_short(direct_conn *c)
{
	bool blank = true;
	for (size_t i = 0; i < c->in_len && blank; i++) {
		blank = c->in[i] == '\r' || c->in[i] == '\n';
	}
	if (blank) {
		c->close_after = true;
		c->in_len = 0;
		return STEP_DONE;
	}
	direct_refuse(c, 400, "the request was cut short");
	return STEP_DONE;
}

void direct_consume(direct_conn *c, size_t n)
{
	memmove(c->in, c->in + n, c->in_len - n);
	c->in_len -= n;
	c->continued = false;
	c->started = c->in_len > 0;
	direct_chunked_reset(c);
	c->raw_pos = c->body_len = 0;
}

/* After serving: write, then read on or close. False when c was closed. */
bool direct_settle(direct_conn *c)
{
	if (!direct_flush_some(c)) {
		direct_conn_close(c);
		return false;
	}
	if (direct_out_pending(c)) {
		c->phase = CONN_WRITING;
		direct_conn_events(c, EPOLLOUT | EPOLLRDHUP);
		direct_set_deadline(c, D.limits.write_ms);
		return true;
	}
	if (c->eof && (c->in_len == 0 || c->close_after)) {
		direct_conn_close(c); /* everything it sent is answered, and it reads no more: nothing to linger for */
		return false;
	}
	if (c->close_after) {
		if (c->phase != CONN_LINGER) {
			shutdown(c->fd, SHUT_WR);
			c->phase = CONN_LINGER;
			c->in_len = 0;
			direct_conn_events(c, EPOLLIN | EPOLLRDHUP);
			direct_set_deadline(c, LINGER_MS);
		}
		return true;
	}
	if (c->phase == CONN_WRITING) {
		c->phase = CONN_READING;
		direct_conn_events(c, c->eof ? EPOLLOUT : EPOLLIN | EPOLLRDHUP);
	}
	if (c->in_len == 0) {
		c->started = false;
		direct_set_deadline(c, D.limits.idle_ms ? D.limits.idle_ms : D.limits.read_ms);
	}
	return true;
}

/* Reads what the socket holds; false when c was closed (the client left, or sent too much). */
bool direct_read_some(direct_conn *c)
{
	for (;;) {
		if (!direct_grow_in(c)) {
			return true; /* full: process() judges what it holds (a head too large is its 431) */
		}
		ssize_t n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
		if (n > 0) {
			c->in_len += (size_t) n;
			if ((size_t) n < READ_SIZE / 2) {
				return true;
			}
			continue;
		}
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			return true;
		}
		if (n == 0 && (c->in_len > 0 || direct_out_pending(c))) {
			/* shut for writing (half-closed): the requests it sent are still answered */
			c->eof = true;
			direct_conn_events(c, EPOLLOUT);
			return true;
		}
		direct_conn_close(c); /* closed, or reset */
		return false;
	}
}

/* A lingering connection's input, dropped; closed at its end (or on an error). */
void direct_linger(direct_conn *c)
{
	char sink[16384];
	for (;;) {
		ssize_t n = recv(c->fd, sink, sizeof(sink), 0);
		if (n > 0) {
			continue;
		}
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			return;
		}
		direct_conn_close(c);
		return;
	}
}

void direct_expire(void)
{
	uint64_t now = ferry_direct_now();
	if (D.next_deadline == 0 || now < D.next_deadline) {
		return;
	}
	D.next_deadline = 0;
	for (direct_conn *c = D.conns, *next; c; c = next) {
		next = c->next;
		if (c->deadline && c->deadline <= now) {
			if (c->phase == CONN_READING && (c->started || (!c->served && !c->graced)) && !c->close_after) {
				/* too slow to send its request (or its first one): 408, as the front answers it, then the linger */
				direct_refuse(c, 408, "request timeout");
				direct_settle(c);
				continue;
			}
			direct_conn_close(c);
			continue;
		}
		if (c->deadline && (D.next_deadline == 0 || c->deadline < D.next_deadline)) {
			D.next_deadline = c->deadline;
		}
	}
}
