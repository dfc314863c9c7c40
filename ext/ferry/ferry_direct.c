/*
 * Ferry\Ext\direct_serve(): direct mode's event loop (ferry_direct.h). One epoll set holds
 * the listening socket the server handed down, this worker's client connections and the
 * relay, which stays for control (stop, pings) and for the jobs of the front's TLS and
 * HTTP/2 listeners. A request reaches PHP only once it has been read whole, within the
 * limits and timeouts the server gave (FERRY_DIRECT_LIMITS); while PHP runs one, the
 * other connections wait in the kernel, as they would for an in-process server.
 *
 * Each whole request becomes the job a relayed one would be (ferry_direct_ctx.c) and runs
 * through ferry_loop_job.c, whose answers come here instead of the relay. What the C path
 * hands back (an exception, output, a streamed or non-plain answer) returns to php/worker
 * (Internal/Native/DirectLoop.php), which finishes it and writes the answer through
 * Ferry\Ext\direct_answer() to the connection this loop keeps as the current one.
 *
 * The listening socket is shared with every other worker and with the server, never
 * SO_REUSEPORT: a worker that stops leaves the connections queued in the kernel to the
 * others. While full (max_connections) or draining it stops watching that socket. A
 * connection's own reading, writing and closing are ferry_direct_conn.c's.
 *
 * Past 400 lines: process() and run_job() (a request's bytes to a job and its outcome) and
 * direct_serve() (the loop, the drain) are one state machine over the same connection.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "php.h"
#include "zend_closures.h"
#include "zend_exceptions.h"
#include "php_ferry.h"
#include "ferry_direct.h"
#include "ferry_direct_int.h"
#include "ferry_direct_log.h"
#include "ferry_forwarded.h"
#include "ferry_frame.h"
#include "ferry_loop.h"
#include "ferry_job_common.h"

/* What DirectLoop is told (its constants). */
#define DIRECT_RELAY 0   /* the relay has bytes: the PHP loop reads them */
#define DIRECT_AGAIN 1   /* the PHP loop has something to do (output, a queued frame, a signal): no read */
#define DIRECT_RESUME 3  /* the session's $handed is HttpWorker::resume()'s to finish */
#define DIRECT_JOB 4     /* the session's $handed is a job for the PHP path whole ([id, context, body]) */
#define DIRECT_DRAINED 5 /* stopping: no connection is left */
#define DIRECT_SERVED 6  /* max_jobs requests served: the worker asks to be retired */

direct_state ferry_direct_state = {.epfd = -1, .lfd = -1, .relay = -1, .timer = -1};
direct_conn *ferry_direct_current;
uint64_t ferry_direct_write_ms;
char ferry_direct_tag_listen, ferry_direct_tag_relay;
static bool serving;


















/*
 * The fields whose name holds "_" are dropped before anything reads them, as the front (and
 * nginx) drops them unless server.underscores_in_headers is on: PHP spells "-" and "_" alike
 * in $_SERVER, so a client's X_Forwarded_For would stand in for its proxy's X-Forwarded-For.
 */
static void drop_underscored(ferry_http_request *r)
{
	size_t kept = 0;
	for (size_t i = 0; i < r->field_count; i++) {
		if (memchr(r->fields[i].name, '_', r->fields[i].name_len) == NULL) {
			r->fields[kept++] = r->fields[i];
		}
	}
	r->field_count = kept;
}

/* ferry_loop_worker_idle() but for stopping, which a draining worker already is. */
static bool session_quiet(ferry_loop *L)
{
	zval *outbox = OBJ_PROP(L->session, L->C.outbox);
	return Z_TYPE_P(OBJ_PROP(L->session, L->C.closed)) == IS_FALSE && Z_TYPE_P(outbox) == IS_STRING && Z_STRLEN_P(outbox) == 0;
}

static zend_long handed_status;

/* What run_job() made for one request, once the request is handed on or done. */
static void job_free(zval *cookies, char *host, const char *small, direct_form *form, smart_str *ctx)
{
	zval_ptr_dtor(cookies);
	if (host != small) {
		efree(host);
	}
	smart_str_free(&form->form);
	smart_str_free(&form->uploads);
	smart_str_free(&form->paths);
	smart_str_free(ctx);
}

/* One job for the request r whose body is body: run in C, or handed to PHP. */
static step run_job(ferry_loop *L, direct_conn *c, ferry_http_request *r, zend_string *body)
{
	smart_str ctx = {0};
	/* PHP's host is lower case, as fasthttp's URI gives it to the front; the Host field keeps its case */
	if (!D.underscores) {
		drop_underscored(r);
	}
	ferry_dlog_begin(c, r);
	ferry_client client;
	const char *remote = c->remote, *asked = r->host;
	size_t asked_len = r->host_len;
	bool https = false;
	if (D.trusted.count > 0) {
		ferry_forwarded_client(&D.trusted, r, c->remote, &client);
		remote = client.remote;
		asked = client.host;
		asked_len = client.host_len;
		https = client.https;
	}
	char small[256];
	char *host = asked_len < sizeof(small) ? small : emalloc(asked_len + 1); /* and its NUL */
	zend_str_tolower_copy(host, asked, asked_len);
	direct_form form = {0};
	const char *why = NULL;
	int refused = ferry_direct_multipart(r, ZSTR_VAL(body), ZSTR_LEN(body), &D.uploads, &form, &why);
	if (refused) {
		/* the front's uploadFailed(): the body was read whole, the connection stays */
		if (host != small) {
			efree(host);
		}
		smart_str_free(&ctx);
		c->head_request = false;
		ferry_direct_fail(c, refused, why ? why : "malformed multipart body");
		ferry_dlog_finish(c);
		return STEP_DONE;
	}
	ferry_direct_context(&ctx, r, remote, host, asked_len, https, &form, NULL);
	if (form.parsed) {
		/* the fields and files are in the context; PHP gets no body, as from the front */
		body = ZSTR_EMPTY_ALLOC();
		if (form.paths.s) {
			smart_str_append_smart_str(&c->spooled, &form.paths);
		}
	}
	smart_str_0(&ctx);
	zval cookies;
	ferry_direct_cookies(r, &cookies);
	/* Fiber mode's ids have the top bit set: relay jobs run beside them, and answers go by id */
	uint32_t id = D.fibers ? DIRECT_FIBER_ID | (++D.next_id & ~DIRECT_FIBER_ID) : ++D.next_id;
	c->head_request = r->method_len == 4 && memcmp(r->method, "HEAD", 4) == 0;
	c->http10 = r->minor == 0;
	c->close_after = c->close_after || !r->keep_alive || D.draining;
	if (D.fibers) {
		c->served = true;
		D.served++;
		/* every request is PHP's, run in a Fiber beside the others (ferry_direct_fiber.c) */
		direct_fiber_hand(c, r, remote, host, asked_len, https, &form, &cookies, body, id);
		ferry_dlog_run(c, true);
		job_free(&cookies, host, small, &form, &ctx);
		return STEP_PHP;
	}
	L->conn = c;
	L->cookies = &cookies;
	ferry_direct_current = c;
	c->served = true;
	D.served++;
	if (D.stats) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		D.stats->busy_since = (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
		ferry_direct_ttl_arm(c, D.stats->busy_since);
	}
	size_t before = c->out.s ? ZSTR_LEN(c->out.s) : 0;
	ferry_dlog_run(c, true);
	/* With the leak watch, PHP serves each request whole, to check between requests. */
	ferry_job_outcome outcome = D.php_path ? JOB_DECLINED : ferry_loop_serve_job(L, id, ZSTR_VAL(ctx.s), ZSTR_LEN(ctx.s), body);
	bool fatal = PG(last_error_message) && (PG(last_error_type) & (E_ERROR | E_CORE_ERROR | E_COMPILE_ERROR | E_USER_ERROR
		| E_PARSE | E_RECOVERABLE_ERROR));
	if (outcome == JOB_THROWN && zend_is_unwind_exit(EG(exception)) && !fatal) {
		/* exit() in the handler ends the worker: its client hears it as the front says it. (A
		 * fatal error unwinds the same way: php/worker's FatalAnswer answers it, 500.) */
		if ((c->out.s ? ZSTR_LEN(c->out.s) : 0) == before && c->stream == STREAM_NONE) {
			ferry_direct_fail(c, 502, "the worker died while handling the request");
		}
		ferry_dlog_run(c, false);
		c->close_after = true;
		ferry_direct_flush_blocking(c, D.limits.write_ms ? D.limits.write_ms : 1000);
	}
	if (D.stats && outcome != JOB_RESUME && outcome != JOB_DECLINED) {
		ferry_direct_ttl_disarm(c);
		D.stats->busy_since = 0;
		D.stats->requests = (uint64_t) D.served;
	}
	L->conn = NULL;
	L->cookies = NULL;
	step s = STEP_DONE;
	if (outcome == JOB_RESUME) {
		handed_status = DIRECT_RESUME;
		s = STEP_PHP;
	} else if (outcome == JOB_DECLINED) {
		/* The PHP path reads its cookies from the context (the C path set them on the Request). */
		smart_str full = {0};
		ferry_direct_context(&full, r, remote, host, asked_len, https, &form, &cookies);
		smart_str_0(&full);
		zval handed, v;
		array_init_size(&handed, 3);
		ZVAL_LONG(&v, id);
		zend_hash_next_index_insert_new(Z_ARRVAL(handed), &v);
		ZVAL_STR(&v, full.s);
		zend_hash_next_index_insert_new(Z_ARRVAL(handed), &v);
		ZVAL_STR_COPY(&v, body);
		zend_hash_next_index_insert_new(Z_ARRVAL(handed), &v);
		ferry_assign(OBJ_PROP(L->session, L->C.handed), &handed);
		zval_ptr_dtor(&handed);
		handed_status = DIRECT_JOB;
		s = STEP_PHP;
	} else if (outcome == JOB_THROWN) {
		s = STEP_THROWN;
	} else {
		direct_remove_spooled(c);
		ferry_dlog_finish(c);
	}
	job_free(&cookies, host, small, &form, &ctx);
	return s;
}

/*
 * Serves the whole requests c holds, in order, and reads none while answers wait to be
 * written past the high-water mark. STEP_PHP leaves c the current connection.
 */
static step process(ferry_loop *L, direct_conn *c)
{
	while (c->in_len > 0 && !c->close_after && c->job == 0 && c->file_fd < 0 && (!c->out.s || ZSTR_LEN(c->out.s) < OUT_HIGH_WATER)) {
		ferry_http_request r = {0};
		r.fields = D.fields;
		r.field_slots = MAX_FIELDS;
		size_t head_len = 0;
		ferry_http_status st = ferry_http_parse_head(c->in, c->in_len, &D.limits.http, &r, &head_len);
		if (st == FERRY_HTTP_NEED_MORE) {
			if (c->eof) {
				return direct_cut_short(c);
			}
			if (!direct_grow_in(c)) {
				direct_refuse(c, 431, "request header fields too large");
				return STEP_DONE;
			}
			if (!c->started) {
				c->started = true;
				direct_set_deadline(c, D.limits.read_header_ms);
			}
			return STEP_MORE;
		}
		if (st != FERRY_HTTP_OK) {
			direct_refuse(c, (int) st, r.error);
			return STEP_DONE;
		}
		size_t end; /* where this request's bytes end */
		zend_string *body;
		/* OPTIONS *: the server's own 200, as the front answers it; its body is read off and
		 * dropped, and one that is broken or too large closes the connection. */
		bool asterisk = r.target_len == 1 && r.target[0] == '*';
		if (asterisk && D.limits.http.max_body && r.content_length > 0 && (uint64_t) r.content_length > D.limits.http.max_body) {
			c->head_request = false;
			ferry_direct_empty(c, 200);
			c->close_after = true;
			c->in_len = 0;
			return STEP_DONE;
		}
		if (r.chunked) {
			if (c->raw_pos == 0) {
				c->raw_pos = head_len;
			}
			size_t used = 0, produced = 0;
			st = ferry_http_chunked_decode(&c->chunked, c->in + c->raw_pos, c->in_len - c->raw_pos,
				D.limits.http.max_body, &used, &produced);
			memmove(c->in + head_len + c->body_len, c->in + c->raw_pos, produced);
			c->body_len += produced;
			/* the decoded bytes moved down: the unread input follows them */
			size_t rest = c->in_len - c->raw_pos - used;
			memmove(c->in + head_len + c->body_len, c->in + c->raw_pos + used, rest);
			c->raw_pos = head_len + c->body_len;
			c->in_len = c->raw_pos + rest;
			if (st != FERRY_HTTP_OK && st != FERRY_HTTP_NEED_MORE) {
				if (asterisk) {
					c->head_request = false;
					ferry_direct_empty(c, 200);
					c->close_after = true;
					c->in_len = 0;
					return STEP_DONE;
				}
				direct_refuse(c, (int) st, "malformed chunked body");
				return STEP_DONE;
			}
			if (st == FERRY_HTTP_NEED_MORE) {
				goto wait_body;
			}
			end = c->raw_pos;
			body = zend_string_init(c->in + head_len, c->body_len, 0);
		} else {
			uint64_t length = r.content_length > 0 ? (uint64_t) r.content_length : 0;
			if (c->in_len - head_len < length) {
				goto wait_body;
			}
			end = head_len + length;
			body = length ? zend_string_init(c->in + head_len, length, 0) : ZSTR_EMPTY_ALLOC();
		}
		if (asterisk) {
			ferry_dlog_begin(c, &r); /* the front logs its own answer to OPTIONS * too; before r's bytes move */
			zend_string_release(body);
			direct_consume(c, end);
			c->head_request = false;
			c->close_after = c->close_after || !r.keep_alive || D.draining;
			ferry_direct_empty(c, 200);
			ferry_dlog_finish(c);
			continue;
		}
		step s = run_job(L, c, &r, body);
		zend_string_release(body);
		direct_consume(c, end);
		if (s != STEP_DONE) {
			return s;
		}
		if (D.fibers) {
			continue;
		}
		if (!ferry_loop_capture_clean(L) || !(D.draining ? session_quiet(L) : ferry_loop_worker_idle(L))) {
			handed_status = DIRECT_AGAIN;
			return STEP_PHP; /* the PHP loop has something to do first (a queued frame, stopping, output) */
		}
		continue;
wait_body:
		if (c->eof) {
			return direct_cut_short(c);
		}
		if (r.expect_continue && !c->continued && !direct_out_pending(c)) {
			c->continued = true;
			smart_str_appendl(&c->out, "HTTP/1.1 100 Continue\r\n\r\n", 25);
		}
		if (!c->started || c->deadline == 0) {
			c->started = true;
		}
		direct_set_deadline(c, D.limits.read_ms);
		return STEP_MORE;
	}
	return c->in_len > 0 ? STEP_DONE : STEP_MORE;
}



/*
 * Serves the requests c holds and writes their answers for as long as the client takes
 * them. STEP_PHP and STEP_THROWN as process(); else STEP_DONE when c was closed, STEP_MORE
 * when it waits (for input, or for the client to read).
 */
static step serve_conn(ferry_loop *L, direct_conn *c)
{
	for (;;) {
		step s = process(L, c);
		if (s == STEP_PHP || s == STEP_THROWN) {
			return s;
		}
		if (!direct_settle(c)) {
			return STEP_DONE;
		}
		if (s == STEP_MORE || c->phase != CONN_READING || c->in_len == 0) {
			return STEP_MORE;
		}
		/* all written, and requests pipelined behind a large answer are still here */
	}
}



step direct_serve_one(direct_conn *c)
{
	return serve_conn(NULL, c);
}

#define LIMIT_IN(ht, key) ({ zval *z_ = zend_hash_str_find(ht, key, sizeof(key) - 1); \
	z_ && Z_TYPE_P(z_) == IS_LONG && Z_LVAL_P(z_) > 0 ? (uint64_t) Z_LVAL_P(z_) : 0; })

static bool read_limits(HashTable *h)
{
#define LIMIT(key) ({ zval *z = zend_hash_str_find(h, key, sizeof(key) - 1); z && Z_TYPE_P(z) == IS_LONG && Z_LVAL_P(z) > 0 ? (uint64_t) Z_LVAL_P(z) : 0; })
	D.limits.http.max_head = LIMIT("max_header_size");
	D.limits.http.max_headers = LIMIT("max_headers");
	D.limits.http.max_body = LIMIT("max_body_size");
	D.limits.read_header_ms = LIMIT("read_header_timeout_ms");
	D.limits.read_ms = LIMIT("read_timeout_ms");
	D.limits.write_ms = LIMIT("write_timeout_ms");
	ferry_direct_write_ms = D.limits.write_ms; /* what PHP's own answers wait for a slow client */
	D.limits.idle_ms = LIMIT("idle_timeout_ms");
	D.limits.max_connections = LIMIT("max_connections");
	D.max_jobs = (zend_long) LIMIT("max_jobs");
	D.underscores = LIMIT("underscores_in_headers") != 0;
	D.php_path = LIMIT("php_path") != 0;
	zval *trusted = zend_hash_str_find(h, "trusted_proxies", sizeof("trusted_proxies") - 1);
	if (trusted && Z_TYPE_P(trusted) == IS_ARRAY && zend_hash_num_elements(Z_ARRVAL_P(trusted)) > 0) {
		/* for the worker's life: pemalloc, not the request allocator's */
		D.trusted.nets = pecalloc(zend_hash_num_elements(Z_ARRVAL_P(trusted)), sizeof(ferry_cidr), 1);
		zval *entry;
		ZEND_HASH_FOREACH_VAL(Z_ARRVAL_P(trusted), entry) {
			if (Z_TYPE_P(entry) != IS_STRING || !ferry_trusted_parse(Z_STRVAL_P(entry), Z_STRLEN_P(entry), &D.trusted.nets[D.trusted.count])) {
				zend_throw_error(NULL, "Ferry\\Ext\\direct_serve(): trusted_proxies holds something that is not a CIDR");
				return false;
			}
			D.trusted.count++;
		} ZEND_HASH_FOREACH_END();
	}
	/* both bounded by max_body_size, as the front's are (a body past it is refused first) */
	D.uploads.max_disk_bytes = D.uploads.max_field_bytes = D.limits.http.max_body ? (int64_t) D.limits.http.max_body : INT64_MAX;
	zval *up = zend_hash_str_find(h, "uploads", sizeof("uploads") - 1);
	if (up && Z_TYPE_P(up) == IS_ARRAY) {
		HashTable *u = Z_ARRVAL_P(up);
		/* Spooled into this worker's own directory when it has one (FERRY_SPOOL_DIR, made and
		 * removed by the server): a worker killed mid-request then leaves no upload behind. */
		const char *own = getenv("FERRY_SPOOL_DIR");
		zval *dir = zend_hash_str_find(u, "dir", sizeof("dir") - 1);
		if (own && *own) {
			D.uploads.dir = D.uploads_dir = pestrdup(own, 1);
		} else if (dir && Z_TYPE_P(dir) == IS_STRING && Z_STRLEN_P(dir) > 0) {
			D.uploads.dir = D.uploads_dir = pestrdup(Z_STRVAL_P(dir), 1);
		}
		D.uploads.max_files = (int) LIMIT_IN(u, "max_files");
		D.uploads.max_parts = (int) LIMIT_IN(u, "max_parts");
		D.uploads.max_header_bytes = (int) LIMIT_IN(u, "max_part_header_size");
		zval *forbid = zend_hash_str_find(u, "forbid", sizeof("forbid") - 1);
		if (forbid && Z_TYPE_P(forbid) == IS_ARRAY && zend_hash_num_elements(Z_ARRVAL_P(forbid)) > 0) {
			D.forbid = pecalloc(zend_hash_num_elements(Z_ARRVAL_P(forbid)) + 1, sizeof(char *), 1);
			size_t i = 0;
			zval *ext;
			ZEND_HASH_FOREACH_VAL(Z_ARRVAL_P(forbid), ext) {
				if (Z_TYPE_P(ext) == IS_STRING) {
					D.forbid[i++] = pestrdup(Z_STRVAL_P(ext), 1);
				}
			} ZEND_HASH_FOREACH_END();
			D.uploads.forbid = (const char *const *) D.forbid;
		}
	}
	/* A file of the server's (FERRY_DIRECT_STATS), mapped shared: it reads what this worker does. */
	zval *stats = zend_hash_str_find(h, "stats", sizeof("stats") - 1);
	if (stats && Z_TYPE_P(stats) == IS_STRING && Z_STRLEN_P(stats) > 0) {
		int fd = open(Z_STRVAL_P(stats), O_RDWR | O_CLOEXEC);
		void *page = fd >= 0 ? mmap(NULL, sizeof(struct direct_stats), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
		if (page != MAP_FAILED) {
			D.stats = page;
		}
		if (fd >= 0) {
			close(fd); /* the mapping stays */
		}
	}
	return true;
}

static bool setup(zend_long lfd, int relay, HashTable *limits)
{
	if (D.ready) {
		return true;
	}
	int flags = fcntl((int) lfd, F_GETFL);
	if (lfd < 0 || flags < 0) {
		zend_throw_error(NULL, "Ferry\\Ext\\direct_serve(): FERRY_DIRECT_FD %ld is not an open socket", (long) lfd);
		return false;
	}
	fcntl((int) lfd, F_SETFL, flags | O_NONBLOCK);
	/* Made here, in the worker, never in a zygote that forks it: epoll sets do not survive a fork apart. */
	D.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (D.epfd < 0) {
		zend_throw_error(NULL, "Ferry\\Ext\\direct_serve(): epoll_create1: %s", strerror(errno));
		return false;
	}
	D.lfd = (int) lfd;
	D.relay = relay;
	if (!read_limits(limits) || !ferry_dlog_setup(limits)) {
		return false;
	}
	if (D.stats) {
		ferry_direct_ttl_install();
	}
	/* This worker's share of server.max_connections may pass the soft limit on descriptors
	 * it inherited (often 1024): up to the hard one, as the server does for itself. */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (relay >= 0) {
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &ferry_direct_tag_relay};
		epoll_ctl(D.epfd, EPOLL_CTL_ADD, relay, &ev);
	}
	D.ready = true;
	return true;
}

bool direct_setup(zend_long lfd, int relay, HashTable *limits)
{
	return setup(lfd, relay, limits);
}

ZEND_FUNCTION(ferry_direct_serve)
{
	zval *session, *handler, *placeholder, *in, *limits;
	zend_long lfd;
	bool drain;

	ZEND_PARSE_PARAMETERS_START(7, 7)
		Z_PARAM_OBJECT(session)
		Z_PARAM_OBJECT_OF_CLASS(handler, zend_ce_closure)
		Z_PARAM_OBJECT(placeholder)
		Z_PARAM_RESOURCE(in)
		Z_PARAM_LONG(lfd)
		Z_PARAM_ARRAY(limits)
		Z_PARAM_BOOL(drain)
	ZEND_PARSE_PARAMETERS_END();

	if (serving) {
		zend_throw_error(NULL, "Ferry\\Ext\\direct_serve(): already serving");
		RETURN_THROWS();
	}
	ferry_loop L = {0};
	if (!ferry_loop_open(&L, "direct_serve", session, handler, placeholder)) {
		RETURN_THROWS();
	}
	L.out = -1;
	int relay = ferry_stream_fd(in);
	if (relay == -2 && drain) {
		/* A draining worker has nothing more to read from the relay, whatever PHP holds of it:
		 * returning for it would leave the clients waiting while PHP asks again and again. */
		if (!D.ready) {
			RETURN_LONG(DIRECT_DRAINED); /* stopped before it ever served: no connection to finish */
		}
		relay = D.relay;
	}
	if (relay < 0) {
		if (relay == -2) {
			RETURN_LONG(DIRECT_RELAY); /* PHP holds bytes of the relay already */
		}
		RETURN_THROWS();
	}
	L.in = relay;
	if (!setup(lfd, relay, Z_ARRVAL_P(limits))) {
		RETURN_THROWS();
	}
	serving = true;
	zend_long result = DIRECT_RELAY;
	step s;
	if (drain && !D.draining) {
		/* No connection is taken from now on. The queue is shared, not this worker's: what
		 * waits there goes to the workers still accepting (a reload starts the next ones
		 * first), or at a shutdown gets the server's 503 once every worker has gone. The
		 * relay has nothing more to say (the server may even have closed it): only the
		 * clients count. */
		D.draining = true;
		epoll_ctl(D.epfd, EPOLL_CTL_DEL, D.relay, NULL);
		if (D.lfd >= 0) {
			direct_watch_listener(false);
			D.lfd = -1;
		}
	}
	/* The connection PHP just finished a job for goes on where it stopped; before the drain's
	 * sweep, which then finds it idle like the others and gives it its grace. */
	if (D.stats) {
		ferry_direct_ttl_disarm(ferry_direct_current);
		D.stats->busy_since = 0;
		D.stats->requests = (uint64_t) D.served;
	}
	direct_conn *resumed = ferry_direct_current;
	ferry_direct_current = NULL;
	if (resumed) {
		direct_remove_spooled(resumed); /* PHP has answered the request that held them */
		ferry_dlog_finish(resumed);
		if (resumed->stream != STREAM_NONE) {
			resumed->stream = STREAM_NONE; /* an answer in parts that never ended: cut short */
			resumed->close_after = true;
		}
		if ((s = serve_conn(&L, resumed)) == STEP_PHP || s == STEP_THROWN) {
			goto stepped;
		}
	}
	if (drain) {
		/* Again at every call: a job handed to PHP leaves the sweep before its end. */
		for (direct_conn *c = D.conns, *next; c; c = next) {
			next = c->next;
			if (c->phase == CONN_LINGER || c == ferry_direct_current || direct_out_pending(c) || !direct_read_some(c)) {
				continue; /* settled once its answer is out; or gone */
			}
			if (c->in_len == 0 && !c->started && !c->graced) {
				/*
				 * Between two requests, or accepted with none yet. A client that is about to
				 * send one would see a close as a failed request (the keep-alive race): it
				 * gets a short grace to send it, answered with Connection: close; a quiet
				 * one is closed when the grace ends.
				 */
				c->graced = true;
				direct_set_deadline(c, MIN(D.limits.idle_ms ? D.limits.idle_ms : DRAIN_GRACE_MS, DRAIN_GRACE_MS));
			} else if ((s = serve_conn(&L, c)) == STEP_PHP || s == STEP_THROWN) {
				goto stepped;
			}
		}
	} else if (D.lfd >= 0 && (!D.limits.max_connections || D.count < D.limits.max_connections)) {
		direct_watch_listener(true);
	}
	struct epoll_event events[64];
	for (;;) {
		/* first: the connection it closes may be the last one a drain waits for */
		direct_expire();
		if (drain && D.count == 0) {
			result = DIRECT_DRAINED;
			break;
		}
		if (D.max_jobs && D.served >= D.max_jobs && !drain) {
			D.max_jobs = 0; /* said once: the server retires this worker */
			result = DIRECT_SERVED;
			break;
		}
		int timeout = -1;
		if (D.next_deadline) {
			uint64_t now = ferry_direct_now();
			timeout = D.next_deadline > now ? (int) MIN(D.next_deadline - now, 60000) : 0;
		}
		int n = ferry_dlog_wait(D.epfd, events, 64, timeout);
		if (n < 0) {
			if (errno == EINTR && !zend_atomic_bool_load_ex(&EG(vm_interrupt))) {
				continue;
			}
			result = DIRECT_AGAIN; /* a signal for PHP to handle: it calls again */
			break;
		}
		bool relay_ready = false;
		for (int i = 0; i < n; i++) {
			void *tag = events[i].data.ptr;
			if (tag == &ferry_direct_tag_relay) {
				relay_ready = true;
				continue;
			}
			if (tag == &ferry_direct_tag_listen) {
				direct_accept_some(1);
				continue;
			}
			direct_conn *c = tag;
			if (events[i].events & (EPOLLERR | EPOLLHUP)) {
				direct_conn_close(c);
				continue;
			}
			if (c->phase == CONN_LINGER) {
				direct_linger(c);
				continue;
			}
			if (c->phase == CONN_WRITING) {
				if (!direct_settle(c) || c->phase == CONN_WRITING || c->phase == CONN_LINGER) {
					continue; /* closed, or the client still has not taken everything */
				}
				/* the answers are out: the requests pipelined behind them are served now */
			} else if (!direct_read_some(c)) {
				continue;
			}
			s = serve_conn(&L, c);
			if (s == STEP_PHP || s == STEP_THROWN) {
				/* the other events of this batch are seen again: epoll is level-triggered */
				goto stepped;
			}
			if (s == STEP_MORE && (events[i].events & EPOLLRDHUP) && c->in_len == 0 && !direct_out_pending(c)) {
				direct_conn_close(c); /* the client closed its side between requests */
			}
		}
		if (relay_ready) {
			result = DIRECT_RELAY;
			break;
		}
	}
	serving = false;
	RETURN_LONG(result);
stepped:
	serving = false;
	if (s == STEP_THROWN) {
		RETURN_THROWS();
	}
	RETURN_LONG(handed_status);
}

void direct_answer_frame(direct_conn *c, const ferry_frame *fr, const char *payload)
{
	ferry_frame f = *fr;
	size_t clen = f.option_count >= 1 && f.options[0] <= f.length ? f.options[0] : 0;
	bool error = (f.flags & 0x40) != 0;
	bool stream = (f.stream_flags & 0x01) != 0;
	size_t before = c->out.s ? ZSTR_LEN(c->out.s) : 0;
	if (!ferry_direct_answer(c, payload, error ? 0 : clen, payload + (error ? f.length : clen),
		error ? 0 : f.length - clen, stream, error)) {
		if (before == 0 && c->stream == STREAM_NONE) {
			ferry_direct_fail(c, 502, "the worker sent an invalid response");
		} else {
			c->close_after = true;
		}
	}
}

/*
 * Ferry\Ext\direct_answer(string $frames, ?string &$control): the frames php/worker wrote
 * while it finished the current connection's job (DirectLoop's sink). Answer frames go to
 * the client now; control frames are left in $control for the relay, but FINISHED, which
 * would name a job the server never sent. False once the client is gone, which a streamed
 * answer takes as its STOP.
 */
ZEND_FUNCTION(ferry_direct_answer)
{
	zend_string *frames;
	zval *control_out;

	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_STR(frames)
		Z_PARAM_ZVAL(control_out)
	ZEND_PARSE_PARAMETERS_END();

	direct_conn *c = ferry_direct_current;
	smart_str control = {0};
	const uint8_t *p = (const uint8_t *) ZSTR_VAL(frames);
	size_t left = ZSTR_LEN(frames);
	bool wrote = false;
	while (left > 0) {
		ferry_frame f;
		if (ferry_frame_read(p, left, UINT32_MAX, &f) != FERRY_FRAME_OK) {
			smart_str_free(&control);
			zend_throw_error(NULL, "Ferry\\Ext\\direct_answer(): not a whole frame");
			RETURN_THROWS();
		}
		const char *payload = (const char *) p + f.payload_offset;
		if (f.flags & FRAME_CONTROL) {
			if (!(f.length == sizeof("{\"finished\":true}") - 1 && memcmp(payload, "{\"finished\":true}", f.length) == 0)) {
				smart_str_appendl(&control, (const char *) p, f.size);
			}
			p += f.size;
			left -= f.size;
			continue;
		}
		if (!c) {
			p += f.size;
			left -= f.size;
			continue; /* the client is gone: the answer is dropped */
		}
		wrote = true;
		direct_answer_frame(c, &f, payload);
		if (!(f.stream_flags & 0x01)) {
			/* answered: its uploads go before the client can see the answer, as in front mode */
			direct_remove_spooled(c);
		}
		p += f.size;
		left -= f.size;
	}
	if (control.s) {
		ZEND_TRY_ASSIGN_REF_STR(control_out, control.s);
	} else {
		ZEND_TRY_ASSIGN_REF_EMPTY_STRING(control_out);
	}
	if (!c) {
		RETURN_FALSE;
	}
	if (wrote && !ferry_direct_flush_blocking(c, ferry_direct_write_ms)) {
		c->close_after = true;
		RETURN_FALSE;
	}
	RETURN_TRUE;
}

void ferry_direct_rshutdown(void)
{
	/* exit() or a fatal error in a handler: its answer is out, and the buffered lines must not die with the worker */
	if (ferry_direct_current) {
		ferry_dlog_finish(ferry_direct_current);
	}
	if (D.fibers) {
		direct_fiber_shutdown(); /* its requests in flight answered 502, and logged */
	}
	ferry_dlog_flush();
	serving = false;
}
