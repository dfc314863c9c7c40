/*
 * The worker contract: the one php/worker class ext/ferry's worker loops bind to,
 * Ferry\Worker\Internal\WorkerSession, and its version (README.md, "Worker contract").
 */
#ifndef FERRY_CONTRACT_H
#define FERRY_CONTRACT_H

#include "php.h"

/*
 * WorkerSession::CONTRACT_VERSION this extension speaks; Ferry\Ext\CONTRACT_VERSION in PHP.
 * Only contract_test.sh sets another, to build the extension of another release.
 */
#ifndef FERRY_CONTRACT_VERSION
#define FERRY_CONTRACT_VERSION 2
#endif

/* Where the session's contract properties are, found once per http_serve() or fiber_serve() call. */
typedef struct {
	uint32_t stopping, closed, outbox, streams, terminate, since, reports, running, fiber_running, kept, reset,
		capture, sapi_output, max_payload,
		/* http_serve()'s read-ahead buffer and its unserved range, and the job it returns for the PHP runner */
		ahead, ahead_offset, ahead_end, handed;
	/* WorkerSession::runResetHooks() and afterNativeAnswer() */
	zend_function *reset_fn, *after_fn;
} ferry_contract;

void ferry_contract_minit(int module_number);
/*
 * Checks $session's class: its CONTRACT_VERSION is this extension's, and it declares every
 * property of the contract public and typed. False with an Error thrown naming fn otherwise.
 */
bool ferry_contract_bind(const char *fn, zend_object *session, ferry_contract *C);
/*
 * The slot of $name in ce, a public, typed, non-static property of the contract: type is its
 * declared scalar type mask, or 0 for a class type. False with an Error naming fn otherwise.
 * For the classes the contract reaches through the session ($capture's) and the public
 * properties of Request and Job.
 */
bool ferry_contract_prop(const char *fn, zend_class_entry *ce, const char *name, uint32_t type, uint32_t *offset);
/* The slot of a public static typed property of the contract, or NULL with an Error thrown. */
zval *ferry_contract_static(const char *fn, zend_class_entry *ce, const char *name);

#endif
