"""Initcalls from ``initcall_debug`` (init/main.c): pair each ``calling`` with its ``returned``."""

from __future__ import annotations

from bootscope.model import Initcall, InitcallSummary


class InitcallSeen:
    """Collects initcall lines of one boot, in order; ``summary`` turns them into an InitcallSummary."""

    def __init__(self) -> None:
        self._open: dict[str, tuple[float | None, int | None, str | None]] = {}
        self._done: list[Initcall] = []

    def start(self, groups: tuple[str | None, ...], t: float | None) -> None:
        """Note a ``calling  fn @ pid`` line at guest time ``t`` (s)."""
        name, module, pid = groups[0] or "?", groups[1], groups[2]
        self._open[name] = (t, int(pid) if pid else None, module)

    def done(self, groups: tuple[str | None, ...], t: float | None) -> None:
        """Note an ``initcall fn returned R after N usecs`` line."""
        name, module, ret, usecs = groups[0] or "?", groups[1], groups[2], groups[3]
        start_s, pid, started_module = self._open.pop(name, (None, None, module))
        duration_us = int(usecs or 0)
        if start_s is None and t is not None:
            start_s = max(t - duration_us / 1e6, 0.0)
        self._done.append(Initcall(name, start_s, duration_us, int(ret or 0), pid, started_module or module))

    def summary(self, top_n: int) -> InitcallSummary:
        """Return counts, total (s), failures (non-zero returns), calls that never returned and the top N."""
        unfinished = tuple(
            Initcall(name, start_s, None, None, pid, module)
            for name, (start_s, pid, module) in self._open.items()
        )
        done = self._done
        top = sorted(done, key=lambda call: call.duration_us or 0, reverse=True)[:top_n]
        return InitcallSummary(
            count=len(done) + len(unfinished),
            total_s=sum(call.duration_us or 0 for call in done) / 1e6,
            failed=tuple(call for call in done if call.ret),
            unfinished=unfinished,
            top=tuple(top),
            all=(*done, *unfinished),
        )
