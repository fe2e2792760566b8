"""Every conformance scenario run through the client against a fresh server: Protocol/conformance/*.ndjson
against a plain one, restricted/*.ndjson against one started with restricted/auth.json and
--max-connections 4 (Protocol/conformance/restricted/README.md)."""

from __future__ import annotations

import io
import unittest

from .conformance import SCENARIOS, run_all
from .support import Server


class Conformance(unittest.TestCase):
    def run_against(self, paths, *arguments: str) -> None:
        self.assertTrue(paths, "no scenarios found")
        server = Server(*arguments)
        self.addCleanup(server.remove)
        report = io.StringIO()
        failures = run_all(paths, server.address, out=report)
        self.assertEqual(failures, [], report.getvalue())
        self.assertEqual(server.stop(), 0)

    def test_every_scenario_passes_through_the_client(self) -> None:
        self.run_against(sorted(SCENARIOS.glob("*.ndjson")))

    def test_every_restricted_scenario_passes_through_the_client(self) -> None:
        restricted = SCENARIOS / "restricted"
        self.run_against(sorted(restricted.glob("*.ndjson")),
                         "--auth", str(restricted / "auth.json"), "--max-connections", "4")


if __name__ == "__main__":
    unittest.main()
