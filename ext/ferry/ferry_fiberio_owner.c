/*
 * Which request a hooked connection belongs to (pool.fiber_io).
 *
 * A connection an app keeps across requests (a PDO or Redis handle in a container, a static
 * client) would otherwise serve two requests at once in Fiber mode: the second one's queries
 * inside the first one's transaction, one user's answer read by another. So the first job
 * that reads or writes a hooked stream owns it until that job ends, and any other job that
 * touches it meanwhile gets a warning and a failed operation, which its client reports as a
 * lost connection. Used by one request after another (the usual shared handle under
 * sequential load), it simply changes hands.
 *
 * A job is a (Fiber, epoch) pair: php/worker moves the Fiber's epoch when a job starts and
 * when it ends (Ferry\Ext\fiber_io_turn()), so an owner whose epoch moved on has finished.
 * Epochs come from one process-wide clock, so a Fiber allocated where a dead one was starts
 * with an epoch no owner holds. Only Fibers php/worker turned are job Fibers: code outside
 * them (boot, the loop, an app's own Fiber) neither owns nor is refused.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "zend_fibers.h"
#include "php_ferry.h"
#include "ferry_fiberio.h"

typedef struct {
	zend_fiber *fiber;
	zend_ulong epoch;
} fio_owner;

static HashTable fio_epochs; /* zend_fiber* => epoch (IS_LONG) */
static HashTable fio_owners; /* php_stream* => fio_owner* (IS_PTR) */
static bool fio_owner_init;
static zend_ulong fio_clock;

static void fio_owner_free(zval *zv)
{
	pefree(Z_PTR_P(zv), 1);
}

static void fio_owner_ensure(void)
{
	if (!fio_owner_init) {
		zend_hash_init(&fio_epochs, 16, NULL, NULL, 1);
		zend_hash_init(&fio_owners, 16, NULL, fio_owner_free, 1);
		fio_owner_init = true;
	}
}

void ferry_fio_turn(zend_fiber *fiber)
{
	fio_owner_ensure();
	zval v;
	ZVAL_LONG(&v, (zend_long) ++fio_clock);
	zend_hash_index_update(&fio_epochs, (zend_ulong) (uintptr_t) fiber, &v);
}

static zval *fio_epoch_of(zend_fiber *fiber)
{
	return zend_hash_index_find(&fio_epochs, (zend_ulong) (uintptr_t) fiber);
}

bool ferry_fio_owner_check(php_stream *stream)
{
	zend_fiber *cur = EG(active_fiber);
	if (!fio_owner_init || cur == NULL || !ferry_fio_enabled()) {
		return true;
	}
	zval *mine = fio_epoch_of(cur);
	if (!mine) {
		return true;
	}
	zend_ulong key = (zend_ulong) (uintptr_t) stream;
	fio_owner *o = zend_hash_index_find_ptr(&fio_owners, key);
	if (o && o->fiber == cur && o->epoch == (zend_ulong) Z_LVAL_P(mine)) {
		return true;
	}
	if (o) {
		zval *theirs = fio_epoch_of(o->fiber);
		if (theirs && (zend_ulong) Z_LVAL_P(theirs) == o->epoch) {
			php_error_docref(NULL, E_WARNING, "this connection is in use by another request still running (pool.fiber_io): "
				"keep one connection per request, or per Fiber");
			return false;
		}
	} else {
		o = pemalloc(sizeof(*o), 1);
		zend_hash_index_add_new_ptr(&fio_owners, key, o);
	}
	o->fiber = cur;
	o->epoch = (zend_ulong) Z_LVAL_P(mine);
	return true;
}

void ferry_fio_owner_forget(php_stream *stream)
{
	if (fio_owner_init) {
		zend_hash_index_del(&fio_owners, (zend_ulong) (uintptr_t) stream);
	}
}

void ferry_fio_owner_shutdown(void)
{
	if (fio_owner_init) {
		zend_hash_destroy(&fio_owners);
		zend_hash_destroy(&fio_epochs);
		fio_owner_init = false;
	}
}

ZEND_FUNCTION(ferry_fiber_io_turn)
{
	zval *fiber;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_OBJECT_OF_CLASS(fiber, zend_ce_fiber)
	ZEND_PARSE_PARAMETERS_END();
	/* std is a zend_fiber's first member */
	ferry_fio_turn((zend_fiber *) Z_OBJ_P(fiber));
}
