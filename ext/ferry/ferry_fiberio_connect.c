/*
 * pool.fiber_io's connect: a blocking tcp or unix connect made inside a Fiber the loop may
 * suspend. A host name is resolved by a thread of its own while the Fiber waits on the loop,
 * then each address it resolved to is tried in order, as PHP's blocking connect does
 * (php_network_connect_socket_to_host), each connect being PHP's own asynchronous one the
 * Fiber waits for. Numeric addresses and unix paths go straight to that connect.
 *
 * The lookup thread owns only malloc'd memory (the name copied in, getaddrinfo()'s answer
 * out) and an eventfd it signals when done; it never touches PHP. Its record is shared by
 * reference count with the Fiber, so a Fiber that times out or is thrown into while the
 * lookup runs just lets go, and the thread frees the answer when it is done. The thread is
 * detached and lives for one lookup: nothing is left running that a later fork() (a worker
 * forked from a zygote) would copy half-done.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "php.h"
#include "main/php_network.h"
#include "ferry_fiberio.h"

typedef struct {
	int refs;              /* the thread's and the Fiber's; the last to let go frees */
	int done;              /* set (release) by the thread once gai_error and res are in */
	int efd;               /* the thread adds 1 when done; the Fiber waits on it */
	int family;
	int gai_error;
	struct addrinfo *res;
	char host[];
} fio_lookup;

/*
 * Lookup threads alive at once, those whose Fiber gave up included (a connect timeout
 * shorter than the resolver's lets the thread run on): past the cap a lookup is PHP's own,
 * blocking, rather than one more thread per request while DNS is down.
 */
#define FIO_MAX_LOOKUPS 64
static int fio_lookups_live;
static pthread_once_t fio_atfork_once = PTHREAD_ONCE_INIT;

/* A forked child has none of its parent's threads. */
static void fio_lookups_forked(void)
{
	fio_lookups_live = 0;
}

static void fio_atfork(void)
{
	pthread_atfork(NULL, NULL, fio_lookups_forked);
}

static void fio_lookup_release(fio_lookup *l)
{
	if (__atomic_sub_fetch(&l->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		if (l->res) {
			freeaddrinfo(l->res);
		}
		close(l->efd);
		free(l);
	}
}

static void *fio_lookup_run(void *arg)
{
	fio_lookup *l = arg;
	struct addrinfo hints;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = l->family;
	hints.ai_socktype = SOCK_STREAM;
	l->gai_error = getaddrinfo(l->host, NULL, &hints, &l->res);
	__atomic_store_n(&l->done, 1, __ATOMIC_RELEASE);
	uint64_t one = 1;
	ssize_t n = write(l->efd, &one, sizeof(one));
	(void) n; /* an eventfd's counter cannot overflow from one add */
	fio_lookup_release(l);
	__atomic_sub_fetch(&fio_lookups_live, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* As PHP asks: every family unless the machine cannot make an IPv6 socket at all. */
static int fio_lookup_family(void)
{
	static int family = AF_UNSPEC - 1;
	if (family == AF_UNSPEC - 1) {
		int s = socket(AF_INET6, SOCK_DGRAM, 0);
		family = s < 0 ? AF_INET : AF_UNSPEC;
		if (s >= 0) {
			close(s);
		}
	}
	return family;
}

static fio_lookup *fio_lookup_start(const char *host, size_t len)
{
	pthread_once(&fio_atfork_once, fio_atfork);
	if (__atomic_load_n(&fio_lookups_live, __ATOMIC_RELAXED) >= FIO_MAX_LOOKUPS) {
		return NULL;
	}
	fio_lookup *l = malloc(sizeof(*l) + len + 1);
	if (!l) {
		return NULL;
	}
	memset(l, 0, sizeof(*l));
	memcpy(l->host, host, len);
	l->host[len] = '\0';
	l->refs = 2;
	l->family = fio_lookup_family();
	l->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (l->efd < 0) {
		free(l);
		return NULL;
	}
	/* The thread runs with every signal blocked: PHP's handlers (max_execution_time's
	 * SIGPROF, pcntl's) must run on PHP's thread, never on this one. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_t attr;
	pthread_t tid;
	int err = pthread_attr_init(&attr);
	if (err == 0) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		__atomic_add_fetch(&fio_lookups_live, 1, __ATOMIC_RELAXED);
		err = pthread_create(&tid, &attr, fio_lookup_run, l);
		if (err != 0) {
			__atomic_sub_fetch(&fio_lookups_live, 1, __ATOMIC_RELAXED);
		}
		pthread_attr_destroy(&attr);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err != 0) {
		close(l->efd);
		free(l);
		return NULL;
	}
	return l;
}

static void fio_deadline(struct timeval *deadline, const struct timeval *timeout)
{
	gettimeofday(deadline, NULL);
	timeradd(deadline, timeout, deadline);
}

/* The time left until deadline (zero once past it); false when it has passed. */
static bool fio_left(const struct timeval *deadline, struct timeval *left)
{
	struct timeval now;
	gettimeofday(&now, NULL);
	if (!timercmp(&now, deadline, <)) {
		left->tv_sec = 0;
		left->tv_usec = 0;
		return false;
	}
	timersub(deadline, &now, left);
	return true;
}

static void fio_fail(php_stream_xport_param *x, int err)
{
	if (x->outputs.error_text) {
		zend_string_release(x->outputs.error_text);
		x->outputs.error_text = NULL;
	}
	x->outputs.error_code = err;
	x->outputs.returncode = err ? -1 : 0;
	if (err && x->want_errortext) {
		x->outputs.error_text = php_socket_error_str(err);
	}
}

/* Ends a connect PHP began asynchronously as its blocking connect would have. */
static void fio_connect_settle(php_netstream_data_t *sock, php_stream_xport_param *x, struct timeval *timeout)
{
	int err = 0;
	struct pollfd p = {.fd = sock->socket, .events = POLLOUT};
	if (poll(&p, 1, 0) <= 0) {
		switch (ferry_fio_await(sock->socket, true, timeout)) {
		case FERRY_FIO_READY:
			break;
		case FERRY_FIO_TIMEOUT:
			err = ETIMEDOUT;
			break;
		case FERRY_FIO_FAILED:
			err = ECANCELED;
			break;
		case FERRY_FIO_BLOCK:
			if (php_pollfd_for(sock->socket, POLLOUT, timeout) <= 0) {
				err = ETIMEDOUT;
			}
			break;
		}
	}
	if (err == 0) {
		socklen_t len = sizeof(err);
		if (getsockopt(sock->socket, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
			err = errno;
		}
	}
	fio_fail(x, err);
	php_set_sock_blocking(sock->socket, 1);
}

/* One attempt: PHP's asynchronous connect to x's name, then the wait for it. */
static int fio_connect_one(php_stream *stream, const php_stream_ops *orig, php_stream_xport_param *x, struct timeval *timeout)
{
	php_netstream_data_t *sock = stream->abstract;
	struct timeval *given = x->inputs.timeout;
	x->op = STREAM_XPORT_OP_CONNECT_ASYNC;
	x->inputs.timeout = timeout;
	int r = ferry_fio_orig_set_option(stream, orig, PHP_STREAM_OPTION_XPORT_API, 0, x);
	x->op = STREAM_XPORT_OP_CONNECT;
	x->inputs.timeout = given;
	if (r == PHP_STREAM_OPTION_RETURN_OK && x->outputs.returncode != -1 && sock->socket != -1) {
		fio_connect_settle(sock, x, timeout);
	}
	return r;
}

/*
 * The host of "host:port" when it is a name to resolve: not "[v6]:port", not a numeric
 * IPv4 or IPv6 address, split where PHP's parse_ip_address_ex() splits (the first colon
 * but a last one). Anything else is left to PHP's own connect.
 */
static bool fio_host_name(const char *name, size_t len, char *host, size_t cap, const char **port)
{
	if (len < 2 || name[0] == '[') {
		return false;
	}
	const char *colon = memchr(name, ':', len - 1);
	if (!colon || colon == name || (size_t) (colon - name) >= cap || memchr(name, '\0', colon - name)) {
		return false;
	}
	memcpy(host, name, colon - name);
	host[colon - name] = '\0';
	struct in_addr a4;
	struct in6_addr a6;
	if (inet_aton(host, &a4) || inet_pton(AF_INET6, host, &a6) == 1) {
		return false;
	}
	*port = colon + 1;
	return true;
}

/* PHP's words for a failed lookup (php_network_getaddresses()), warning included. */
static void fio_lookup_failed(php_stream_xport_param *x, const char *host, int gai_error)
{
	zend_string *msg = strpprintf(0, "php_network_getaddresses: getaddrinfo for %s failed: %s", host, gai_strerror(gai_error));
	php_error_docref(NULL, E_WARNING, "%s", ZSTR_VAL(msg));
	fio_fail(x, 0);
	x->outputs.returncode = -1;
	if (x->want_errortext) {
		x->outputs.error_text = msg;
	} else {
		zend_string_release(msg);
	}
}

/* Each resolved address in turn, until one connects or the time is up. */
static int fio_connect_each(php_stream *stream, const php_stream_ops *orig, php_stream_xport_param *x,
	const struct addrinfo *res, const char *port, size_t port_len, const struct timeval *deadline)
{
	php_netstream_data_t *sock = stream->abstract;
	char *given = x->inputs.name;
	size_t given_len = x->inputs.namelen;
	int r = PHP_STREAM_OPTION_RETURN_OK;
	bool tried = false;
	for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		char num[NI_MAXHOST];
		struct timeval left;
		if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			|| getnameinfo(ai->ai_addr, ai->ai_addrlen, num, sizeof(num), NULL, 0, NI_NUMERICHOST) != 0) {
			continue;
		}
		if (deadline && !fio_left(deadline, &left)) {
			break; /* as PHP's: no attempt once the connect timeout is spent */
		}
		zend_string *owned = ai->ai_family == AF_INET6 ? strpprintf(0, "[%s]:%.*s", num, (int) port_len, port)
			: strpprintf(0, "%s:%.*s", num, (int) port_len, port);
		x->inputs.name = ZSTR_VAL(owned);
		x->inputs.namelen = ZSTR_LEN(owned);
		r = fio_connect_one(stream, orig, x, deadline ? &left : NULL);
		x->inputs.name = given;
		x->inputs.namelen = given_len;
		zend_string_release(owned);
		tried = true;
		if (r != PHP_STREAM_OPTION_RETURN_OK || x->outputs.returncode == 0) {
			return r;
		}
		if (sock->socket != -1) {
			close(sock->socket);
			sock->socket = -1;
		}
		if (EG(exception)) {
			break; /* thrown into while connecting: no further attempt */
		}
	}
	if (!tried) {
		fio_fail(x, ETIMEDOUT);
	}
	return r;
}

/*
 * Returns -2 when the connect must be left to PHP's own (blocking) code: not a name, no
 * thread, or this Fiber cannot wait on the loop after all (its closure said null).
 */
int ferry_fio_connect(php_stream *stream, const php_stream_ops *orig, php_stream_xport_param *x, bool by_name)
{
	char host[NI_MAXHOST];
	const char *port;
	struct timeval deadline, left;
	if (!by_name || !x->inputs.name || !fio_host_name(x->inputs.name, x->inputs.namelen, host, sizeof(host), &port)) {
		return fio_connect_one(stream, orig, x, x->inputs.timeout);
	}
	if (x->inputs.timeout) {
		fio_deadline(&deadline, x->inputs.timeout);
	}
	fio_lookup *l = fio_lookup_start(host, strlen(host));
	if (!l) {
		return -2;
	}
	if (x->inputs.timeout) {
		fio_left(&deadline, &left);
	}
	ferry_fio_wait w = ferry_fio_await(l->efd, false, x->inputs.timeout ? &left : NULL);
	if (w == FERRY_FIO_READY && !__atomic_load_n(&l->done, __ATOMIC_ACQUIRE)) {
		w = FERRY_FIO_BLOCK; /* woken without an answer (a fork() copied the wait, not the thread) */
	}
	if (w != FERRY_FIO_READY) {
		fio_lookup_release(l);
		if (w == FERRY_FIO_BLOCK) {
			return -2;
		}
		fio_fail(x, w == FERRY_FIO_TIMEOUT ? ETIMEDOUT : ECANCELED);
		return PHP_STREAM_OPTION_RETURN_OK;
	}
	int r;
	if (l->gai_error != 0) {
		fio_lookup_failed(x, host, l->gai_error);
		r = PHP_STREAM_OPTION_RETURN_OK;
	} else if (!l->res) {
		r = -2;
	} else {
		size_t port_len = x->inputs.namelen - (size_t) (port - x->inputs.name);
		r = fio_connect_each(stream, orig, x, l->res, port, port_len, x->inputs.timeout ? &deadline : NULL);
	}
	fio_lookup_release(l);
	return r;
}
