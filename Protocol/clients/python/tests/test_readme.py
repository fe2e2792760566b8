"""The README's examples run against a real server and do what their comments say: the first session (its
first Python code block), and the change feed's example (the block of "The change feed and exports")."""

from __future__ import annotations

import contextlib
import io
import re
import threading
import unittest

from entitled import Client

from .support import CLIENT_ROOT, Server


def readme_block(after_heading: str | None = None) -> str:
    """The first Python code block of the README, or of its section `after_heading`."""
    readme = (CLIENT_ROOT / "README.md").read_text(encoding="utf-8")
    if after_heading is not None:
        readme = readme[readme.index(f"\n{after_heading}\n"):]
    return re.search(r"```python\n(.*?)```", readme, re.S).group(1)


def run_block(block: str, port: int) -> tuple[list[str], dict]:
    """Runs a block against the server on `port`; returns the lines it printed and its variables."""
    output = io.StringIO()
    namespace: dict = {}
    with contextlib.redirect_stdout(output):
        exec(compile(block.replace("7117", str(port)), "README.md", "exec"), namespace)
    return output.getvalue().splitlines(), namespace


class ReadmeFirstSession(unittest.TestCase):
    def test_the_first_code_block_runs(self) -> None:
        block = readme_block()
        self.assertIn('Client("127.0.0.1", 7117)', block)
        server = Server()
        self.addCleanup(server.remove)
        lines, _ = run_block(block, server.port)
        self.assertEqual(len(lines), 2, lines)
        self.assertRegex(lines[0], r"^pro until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+\+00:00$")
        self.assertEqual(lines[1], "not_found")
        self.assertEqual(server.stop(), 0)


class ReadmeChangeFeed(unittest.TestCase):
    def test_the_change_feed_example_keeps_a_copy_equal_to_the_server_while_others_write(self) -> None:
        block = readme_block("## The change feed and exports")
        self.assertIn("iter_export", block)
        server = Server()
        self.addCleanup(server.remove)
        users = [f"reader-{u}" for u in range(40)]
        with Client("127.0.0.1", server.port) as writer:
            granted = writer.pipeline([{"op": "grant", "user": user, "product": f"prod_{k}", "device": f"{user}-phone"}
                                       for user in users for k in range(30)])

            def write_meanwhile() -> None:  # while the example copies and follows: at once, so within its 1 s
                writes = [{"op": "revoke", "membership": answer["membership"]["id"], "reason": "refund"}
                          for answer in granted[:20]]
                writes += [{"op": "grant", "user": user, "product": "prod_late"} for user in users[:20]]
                writes.append({"op": "erase", "device": "reader-3-phone", "reason": "ticket"})
                for answer in writer.pipeline(writes):
                    writer.raise_for(answer)

            meanwhile = threading.Thread(target=write_meanwhile)
            meanwhile.start()
            try:
                lines, variables = run_block(block, server.port)
            finally:
                meanwhile.join()
            listed = {m["id"]: m for user in users for m in writer.iter_memberships(user=user, page_size=1000)}
            last = writer.last_seq
        self.assertEqual(variables["copy"], listed)
        self.assertEqual(variables["position"], last)
        self.assertEqual(lines, [f"{len(listed)} memberships as of change {last}"])
        self.assertEqual(server.stop(), 0)


if __name__ == "__main__":
    unittest.main()
