"""The scenario registry, in report order. Each module has NAME, TITLE and run(ctx) -> Section.

A scenario whose components do not exist yet returns Section.not_run(reason): it is listed in
the report with that reason and never faked."""

from . import (burst, compression, concurrency, ext, external, fiberhello, fiberio, fibers, framework, h2, hello, laravel,
               leakwatch, legacy, memory, mixed, profile, relay, respawn, roadrunner, soak, symfony)

REGISTRY = [hello, framework, relay, fibers, fiberhello, fiberio, external.TARANTOOL, external.MSGPACK, external.VOTING,
            concurrency, mixed, symfony, laravel, roadrunner, h2, compression, leakwatch, ext, legacy, profile, soak,
            memory, respawn, burst]


def names():
    return [s.NAME for s in REGISTRY]


def get(name):
    for s in REGISTRY:
        if s.NAME == name:
            return s
    raise KeyError(name)
