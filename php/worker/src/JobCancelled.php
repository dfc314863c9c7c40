<?php

declare(strict_types=1);

namespace Ferry\Worker;

/**
 * Thrown in Fiber mode into a job's Fiber where it waits on the loop (a hooked socket read,
 * sleep(), Loop::wait()) when the server gives up on the job: it ran past pool.exec_ttl, or
 * its client left (unless ignore_user_abort(true) is set). The client has its 504, or is
 * gone; whatever the job answers after this is dropped. Let it unwind (finally blocks run):
 * a job past exec_ttl that catches it and goes on is killed with its worker once the
 * server's grace is over, as every job past exec_ttl was before.
 */
final class JobCancelled extends \RuntimeException
{
}
