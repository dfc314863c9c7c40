/*
 * Direct mode with pool.fibers, the answers (ferry_direct_fiber.c has the loop): frames of
 * several jobs at once, each request's to its own connection by job id, and the end of a
 * job, after which its connection goes on with what its client sent next.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "ferry_direct_int.h"
#include "ferry_direct_log.h"
#include "ferry_frame.h"
#include "ferry_loop.h"

/*
 * Ferry\Ext\direct_answer_to(string $frames, ?string &$control): list<int>. The frames
 * php/worker wrote, from any of its jobs: a direct request's answer frames go to its
 * client (as direct_answer() writes them), all else is left in $control for the relay.
 * Returns the ids of the requests whose client is gone, whose answer was dropped (a
 * streamed answer takes that as its STOP).
 */
ZEND_FUNCTION(ferry_direct_answer_to)
{
	zend_string *frames;
	zval *control_out;

	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_STR(frames)
		Z_PARAM_ZVAL(control_out)
	ZEND_PARSE_PARAMETERS_END();

	smart_str control = {0};
	array_init(return_value);
	const uint8_t *p = (const uint8_t *) ZSTR_VAL(frames);
	size_t left = ZSTR_LEN(frames);
	while (left > 0) {
		ferry_frame f;
		if (ferry_frame_read(p, left, UINT32_MAX, &f) != FERRY_FRAME_OK) {
			smart_str_free(&control);
			zend_throw_error(NULL, "Ferry\\Ext\\direct_answer_to(): not a whole frame");
			RETURN_THROWS();
		}
		const char *payload = (const char *) p + f.payload_offset;
		uint32_t id = f.option_count >= 2 ? f.options[1] : 0;
		if ((f.flags & FRAME_CONTROL) || !(id & DIRECT_FIBER_ID) || !D.fibers) {
			smart_str_appendl(&control, (const char *) p, f.size);
		} else {
			direct_conn *c = direct_fiber_pinned(id);
			if (c) {
				c->job_answered = true;
				direct_answer_frame(c, &f, payload);
				if (!(f.stream_flags & 0x01)) {
					/* answered: its uploads go before the client can see the answer, as in front mode */
					direct_remove_spooled(c);
					ferry_dlog_finish(c);
				}
				/*
				 * Written as far as the client takes it now, the rest by the loop: other
				 * requests run meanwhile. Only past the high-water mark does a streamed
				 * answer wait for its client (up to write_timeout), as a sequential one does.
				 */
				size_t queued = c->out.s ? ZSTR_LEN(c->out.s) - c->out_off : 0;
				bool out = (f.stream_flags & 0x01) && queued > OUT_HIGH_WATER
					? ferry_direct_flush_blocking(c, D.limits.write_ms) : direct_flush_some(c);
				if (!out) {
					direct_conn_close(c);
					c = NULL;
				} else {
					direct_fiber_watch(c);
				}
			}
			if (!c) {
				zval v;
				ZVAL_LONG(&v, id);
				zend_hash_next_index_insert(Z_ARRVAL_P(return_value), &v);
			}
		}
		p += f.size;
		left -= f.size;
	}
	if (D.fibers) {
		direct_fiber_arm_timer(); /* for the access log's lines, should the loop go quiet */
	}
	if (control.s) {
		ZEND_TRY_ASSIGN_REF_STR(control_out, control.s);
	} else {
		ZEND_TRY_ASSIGN_REF_EMPTY_STRING(control_out);
	}
}

/* Ferry\Ext\direct_done(int $id): the job $id has ended, its answer written (or dropped). */
ZEND_FUNCTION(ferry_direct_done)
{
	zend_long id;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_LONG(id)
	ZEND_PARSE_PARAMETERS_END();

	direct_conn *c = id > 0 && id <= UINT32_MAX ? direct_fiber_pinned((uint32_t) id) : NULL;
	if (!c) {
		return; /* its client is gone */
	}
	direct_fiber_drop(D.pinned, &D.pinned_n, c);
	c->job = 0;
	direct_fiber_publish_busy();
	direct_remove_spooled(c);
	if (!c->job_answered) {
		/* it ended unanswered: its Fiber was destroyed as the worker ends (exit() in another) */
		ferry_direct_fail(c, 502, "the worker died while handling the request");
		c->close_after = true;
	}
	if (c->stream != STREAM_NONE) {
		c->stream = STREAM_NONE; /* an answer in parts that never ended: cut short */
		c->close_after = true;
	}
	direct_fiber_push(&D.resumed, &D.resumed_n, &D.resumed_cap, c);
}

/*
 * The worker ends with requests in flight (exit() in a handler, a fatal error, which
 * php/worker has answered 500 by now): each client hears it as front mode's would, 502
 * when nothing of its answer went out, else the answer cut short.
 */
void direct_fiber_shutdown(void)
{
	while (D.resumed_n > 0) {
		direct_conn *c = D.resumed[D.resumed_n - 1];
		ferry_direct_flush_blocking(c, D.limits.write_ms ? D.limits.write_ms : 1000);
		direct_conn_close(c);
	}
	while (D.pinned_n > 0) {
		direct_conn *c = D.pinned[D.pinned_n - 1];
		if (!c->job_answered) {
			ferry_dlog_run(c, false); /* logged as the front logs a job its worker died in: no pid, no PHP time */
			ferry_direct_fail(c, 502, "the worker died while handling the request");
		}
		c->close_after = true;
		ferry_direct_flush_blocking(c, D.limits.write_ms ? D.limits.write_ms : 1000);
		direct_conn_close(c);
	}
}
