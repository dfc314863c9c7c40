"""--ferry-rev: the temporary git worktree is made from the revision, holds its own php/ SDK,
and is gone, directory and registration, after cleanup. No build here (that is the real
run's job); a revision that does not exist fails cleanly and leaves nothing behind."""

import os
import subprocess
import sys
import tempfile
import unittest

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)

from lib import revision  # noqa: E402
from lib.context import Context  # noqa: E402
from lib.method import Settings  # noqa: E402
from lib.proc import StartError  # noqa: E402


def head():
    return subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()


def ours():
    """The harness's worktrees git knows of (other worktrees may come and go meanwhile)."""
    return {p for p in revision.registered(ROOT) if os.path.basename(os.path.dirname(p)).startswith("ferry-bench-rev-")}


class WorktreeTest(unittest.TestCase):
    def test_add_and_remove(self):
        path, sha = revision.add_worktree(ROOT, "HEAD")
        try:
            self.assertEqual(sha, head())
            self.assertIn(path, revision.registered(ROOT))
            self.assertTrue(os.path.isfile(os.path.join(path, "go.mod")))
            self.assertTrue(os.path.isfile(os.path.join(path, "php", "worker", "autoload.php")))
            checked_out = subprocess.run(["git", "-C", path, "rev-parse", "HEAD"], capture_output=True,
                                         text=True, check=True).stdout.strip()
            self.assertEqual(checked_out, sha)
        finally:
            revision.remove_worktree(ROOT, path)
        self.assertFalse(os.path.exists(path))
        self.assertFalse(os.path.exists(os.path.dirname(path)))
        self.assertNotIn(path, revision.registered(ROOT))

    def test_unknown_revision_leaves_nothing(self):
        before = ours()
        with self.assertRaisesRegex(StartError, "not a commit"):
            revision.add_worktree(ROOT, "no-such-revision-of-ferry")
        self.assertEqual(ours(), before)

    def test_keys_and_labels(self):
        r = revision.Revision("HEAD~1", "0" * 40, "subject", "/tmp/x")
        self.assertEqual(r.key, "ferry@HEAD_1")
        self.assertEqual(r.label, "Ferry@HEAD~1")
        self.assertEqual(r.bin, "/tmp/x/bin/ferry")
        self.assertEqual(r.sdk_autoload(), "/tmp/x/php/worker/autoload.php")


class RevisionsTest(unittest.TestCase):
    def test_a_revision_that_cannot_be_prepared_is_a_failure_not_a_crash(self):
        with tempfile.TemporaryDirectory(prefix="ferry-bench-rev-test-") as out:
            ctx = Context(ROOT, out, Settings(quick=True), 1, 1, 1, ferry_revs=["no-such-revision-of-ferry"])
            self.assertTrue(ctx.revisions)
            self.assertEqual(ctx.revisions.ready(), [])
            self.assertEqual(len(ctx.failures), 1)
            self.assertIn("--ferry-rev no-such-revision-of-ferry", ctx.failures[0])
            # Asked again (by the next scenario), it is not retried nor reported twice.
            self.assertEqual(ctx.revisions.ready(), [])
            self.assertEqual(len(ctx.failures), 1)
            ctx.revisions.cleanup()

    def test_cleanup_removes_the_worktrees_made(self):
        before = ours()
        with tempfile.TemporaryDirectory(prefix="ferry-bench-rev-test-") as out:
            ctx = Context(ROOT, out, Settings(quick=True), 1, 1, 1, ferry_revs=["HEAD"])
            # The checkout step of ready(), without the build.
            r = ctx.revisions.checkout("HEAD")
            self.assertEqual(r.sha, head())
            self.assertIn(r.root, revision.registered(ROOT))
            ctx.revisions.cleanup()
            self.assertEqual(ctx.failures, [])
        self.assertFalse(os.path.exists(r.root))
        self.assertEqual(ours(), before)


if __name__ == "__main__":
    unittest.main()
