"""--ferry-rev REV: another revision of Ferry measured next to the working tree's.

The revision is checked out in a temporary `git worktree` (its own php/ SDK included, since
its workers must run that revision's SDK), `ferry` is built there, and the worktree is
removed when the run ends. Only `git worktree add/remove` touch the repository: the shared
index and the working tree's files are left alone."""

import os
import re
import shutil
import subprocess
import tempfile

from .proc import StartError


def git(repo, *args, timeout=120):
    try:
        res = subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise StartError(f"git {' '.join(args)}: {e}") from e
    if res.returncode != 0:
        raise StartError(f"git {' '.join(args)} exited {res.returncode}: {res.stderr.strip()[-500:]}")
    return res.stdout.strip()


def add_worktree(repo, rev):
    """Checks rev out (detached) in a new temporary directory; returns (path, full sha)."""
    try:
        sha = git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}") if rev else ""
    except StartError:
        sha = ""
    if not sha:
        raise StartError(f"{rev!r} is not a commit of {repo}")
    parent = tempfile.mkdtemp(prefix="ferry-bench-rev-")
    path = os.path.join(parent, "ferry")
    try:
        git(repo, "worktree", "add", "--detach", path, sha)
    except StartError:
        shutil.rmtree(parent, ignore_errors=True)
        raise
    return path, sha


def remove_worktree(repo, path):
    """Removes a worktree made by add_worktree, and its temporary parent directory."""
    try:
        git(repo, "worktree", "remove", "--force", path)
    finally:
        shutil.rmtree(os.path.dirname(path), ignore_errors=True)


def registered(repo):
    """The worktree paths git knows of."""
    out = git(repo, "worktree", "list", "--porcelain")
    return [line[len("worktree "):] for line in out.splitlines() if line.startswith("worktree ")]


class Revision:
    def __init__(self, rev, sha, subject, root):
        self.rev = rev
        self.sha = sha
        self.subject = subject
        self.root = root
        self.bin = os.path.join(root, "bin", "ferry")
        self.key = "ferry@" + re.sub(r"[^A-Za-z0-9._-]", "_", rev)
        self.label = f"Ferry@{rev}"

    def path(self, *parts):
        """A file of this revision's tree."""
        return os.path.join(self.root, *parts)

    def sdk_autoload(self):
        return self.path("php", "worker", "autoload.php")

    def describe(self):
        return f"`{self.rev}` = {self.sha[:12]} ({self.subject})"


class Revisions:
    """The --ferry-rev revisions of a run, prepared the first time a scenario asks for them
    (a scenario that does not compare revisions does not pay for the build)."""

    def __init__(self, repo, revs, ctx):
        self.repo = repo
        self.revs = list(dict.fromkeys(revs or []))
        self.ctx = ctx
        self._ready = {}
        self._worktrees = []

    def __bool__(self):
        return bool(self.revs)

    def ready(self):
        """The revisions built so far; one that cannot be built is a failure of the run."""
        for rev in self.revs:
            if rev not in self._ready:
                try:
                    self._ready[rev] = self._prepare(rev)
                except StartError as e:
                    self._ready[rev] = None
                    self.ctx.fail(f"--ferry-rev {rev}: {e}")
        return [r for r in self._ready.values() if r]

    def checkout(self, rev):
        """The revision in a new worktree, which cleanup() will remove."""
        self.ctx.progress(f"--ferry-rev {rev}: git worktree add")
        path, sha = add_worktree(self.repo, rev)
        self._worktrees.append(path)
        return Revision(rev, sha, git(self.repo, "log", "-1", "--format=%s", sha), path)

    def _prepare(self, rev):
        r = self.checkout(rev)
        if any(o and o.key == r.key for o in self._ready.values()):
            r.key += "-" + r.sha[:7]  # HEAD~1 and HEAD^1 would share a key
        path = r.root
        if not os.path.isfile(r.sdk_autoload()):
            raise StartError(f"{rev} has no php/worker/autoload.php")
        self.ctx.progress(f"--ferry-rev {rev}: go build ./cmd/ferry in {path}")
        env = dict(os.environ, GOWORK="off")
        self.ctx.run(["go", "build", "-ldflags", f"-X main.version={rev}", "-o", r.bin, "./cmd/ferry"],
                     cwd=path, env=env)
        # Its own ext/ferry too: ferry looks for the extension beside its binary, and
        # without one that revision's workers would run pure PHP against this tree's C.
        build_ext = r.path("ext", "ferry", "build.sh")
        if shutil.which("phpize") and os.path.isfile(build_ext):
            self.ctx.progress(f"--ferry-rev {rev}: ext/ferry/build.sh in {path}")
            self.ctx.run(["bash", build_ext], cwd=path, env=env)
        return r

    def cleanup(self):
        """Removes every worktree made; the servers running from them must be stopped first."""
        while self._worktrees:
            path = self._worktrees.pop()
            try:
                remove_worktree(self.repo, path)
                self.ctx.progress(f"removed worktree {path}")
            except StartError as e:
                self.ctx.fail(f"could not remove worktree {path}: {e}")

    def report_lines(self):
        return [f"- **compared revision**: {r.label} = {r.describe()}, built in a temporary git worktree; "
                "its workers use that revision's php/ SDK" for r in self._ready.values() if r]
