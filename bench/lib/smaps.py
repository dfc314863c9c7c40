"""Memory of whole process trees from /proc/<pid>/smaps_rollup: RSS, PSS and USS per process,
each process labelled with its role in its system (front, zygote, worker...)."""

import statistics

from .proc import descendants, stat_fields

FIELDS = ("Rss", "Pss", "Private_Clean", "Private_Dirty", "Shared_Clean", "Shared_Dirty", "Swap")
MEASURES = ("rss", "pss", "uss")


def rollup(pid):
    """{rss, pss, uss, ...} in KiB for one process, or None once it is gone (or unreadable).
    USS = Private_Clean + Private_Dirty: what the process alone holds, freed when it exits.
    PSS charges each shared page to its mappers in equal shares, so PSS summed over the
    processes of one system is that system's share of the memory in use."""
    out = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                name, _, value = line.partition(":")
                if name in FIELDS:
                    out[name] = int(value.split()[0])
    except (OSError, ValueError, IndexError):
        return None
    if "Rss" not in out:
        return None
    return {"rss": out["Rss"], "pss": out.get("Pss", 0),
            "uss": out.get("Private_Clean", 0) + out.get("Private_Dirty", 0),
            **{k.lower(): v for k, v in out.items() if k not in ("Rss", "Pss")}}


def ppid(pid):
    try:
        return int(stat_fields(pid)[1])
    except (OSError, IndexError, ValueError, TypeError):
        return 0


def tree_roles(system):
    """[(pid, role)] for every process a system runs, its front first. Roles: `ferry`,
    `zygote`, `worker` (Ferry's, per its admin socket); `nginx`, `fpm master`, `worker`
    (php-fpm's children)."""
    out = []
    if system.kind == "ferry":
        front = system.procs[0].pid
        workers = set(system.worker_pids())
        out.append((front, "ferry"))
        seen = set(descendants(front))
        for pid in sorted(seen):
            out.append((pid, "worker" if pid in workers else "zygote"))
        # After a refork (pool.refork_after) the workers' parent is the mold, which is
        # nobody's child in Ferry's tree (it was forked twice over from a worker): it is
        # this system's zygote all the same.
        for pid in sorted(workers - seen):
            out.append((pid, "worker"))
        for pid in sorted({ppid(w) for w in workers} - seen - workers - {front, 0, 1}):
            out.append((pid, "zygote"))
        return out
    if system.kind == "fpm":
        fpm, nginx = system.procs[0].pid, system.procs[1].pid
        out.append((nginx, "nginx"))
        out += [(pid, "nginx") for pid in descendants(nginx)]
        out.append((fpm, "fpm master"))
        out += [(pid, "worker") for pid in descendants(fpm)]
        return out
    for p in system.procs:
        out += [(pid, system.kind) for pid in [p.pid] + descendants(p.pid)]
    return out


def measure(system):
    """The system's processes with their readings, sums over all of them and per role, and
    the mean per worker: {processes: [{pid, role, rss, pss, uss}], total, roles, per_worker}."""
    procs = []
    for pid, role in tree_roles(system):
        r = rollup(pid)
        if r:
            procs.append({"pid": pid, "role": role, **r})
    total = {m: sum(p[m] for p in procs) for m in MEASURES}
    roles = {}
    for p in procs:
        agg = roles.setdefault(p["role"], {"n": 0, **{m: 0 for m in MEASURES}})
        agg["n"] += 1
        for m in MEASURES:
            agg[m] += p[m]
    workers = [p for p in procs if p["role"] == "worker"]
    per_worker = {m: statistics.mean(p[m] for p in workers) for m in MEASURES} if workers else None
    return {"processes": procs, "total": total, "roles": roles, "per_worker": per_worker, "workers": len(workers)}
