from __future__ import annotations

import os
import unittest
from typing import Any

import dossier

from .fakeserver import FakeClock, FakeServer, SleepRecorder

KEY = "dsk_test0000000000000000000000000000000"


class FakeServerTest(unittest.TestCase):
    """Starts a FakeServer per test; ``self.client()`` points a Client at it
    with tiny backoff, and records every sleep in ``self.sleeps``."""

    def setUp(self) -> None:
        self.server = FakeServer().start()
        self.addCleanup(self.server.stop)
        self.sleeps = SleepRecorder()
        saved = os.environ.pop("DOSSIER_API_KEY", None)
        if saved is not None:
            self.addCleanup(os.environ.__setitem__, "DOSSIER_API_KEY", saved)

    def client(self, **kw: Any) -> dossier.Client:
        kw.setdefault("base_url", self.server.url)
        kw.setdefault("backoff_base", 0.001)
        kw.setdefault("backoff_cap", 0.01)
        kw.setdefault("timeout", 5)
        client = dossier.Client(kw.pop("api_key", KEY), **kw)
        client._transport.sleep = self.sleeps
        return client

    @staticmethod
    def fake_clock(client: dossier.Client) -> FakeClock:
        """Puts a FakeClock in ``client`` in place of its sleeps and its clock."""
        clock = FakeClock()
        client._transport.sleep = clock
        client._transport.now = clock.now
        return clock
