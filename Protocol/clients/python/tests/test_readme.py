"""The README's first session (its first Python code block) runs against a real server and prints what
its comments say."""

from __future__ import annotations

import contextlib
import io
import re
import unittest

from .support import CLIENT_ROOT, Server


class ReadmeFirstSession(unittest.TestCase):
    def test_the_first_code_block_runs(self) -> None:
        readme = (CLIENT_ROOT / "README.md").read_text(encoding="utf-8")
        block = re.search(r"```python\n(.*?)```", readme, re.S).group(1)
        self.assertIn('Client("127.0.0.1", 7117)', block)
        server = Server()
        self.addCleanup(server.remove)
        output = io.StringIO()
        with contextlib.redirect_stdout(output):
            exec(compile(block.replace("7117", str(server.port)), "README.md", "exec"), {})
        lines = output.getvalue().splitlines()
        self.assertEqual(len(lines), 2, lines)
        self.assertRegex(lines[0], r"^pro until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+\+00:00$")
        self.assertEqual(lines[1], "not_found")
        self.assertEqual(server.stop(), 0)


if __name__ == "__main__":
    unittest.main()
