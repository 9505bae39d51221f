"""systemd-analyze and systemctl show output, as a Debian 12 guest printed it (tests/data/README.md),
and the small forms systemd prints elsewhere (firmware and initrd phases, minutes, not finished)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bootscope.errors import ParseError
from bootscope.parse.systemd import (
    parse_blame,
    parse_critical_chain,
    parse_failed,
    parse_time,
    parse_unit_show,
    span_s,
)

DATA = Path(__file__).resolve().parents[1] / "data"


def _sections() -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current: list[str] = []
    for line in (DATA / "systemd-252-collector-tcg.txt").read_text(encoding="utf-8").splitlines():
        if line.startswith("BOOTSCOPE-SYSTEMD-SECTION "):
            current = sections.setdefault(line.split(" ", 1)[1], [])
        elif not line.startswith("BOOTSCOPE-SYSTEMD-"):
            current.append(line)
    return sections


def test_spans_in_systemds_format() -> None:
    assert span_s("820ms") == pytest.approx(0.82)
    assert span_s("1min 3.044s") == pytest.approx(63.044)
    assert span_s("1h 2min 3.5s") == pytest.approx(3723.5)
    assert span_s("356us") == pytest.approx(356e-6) == span_s("356µs")
    with pytest.raises(ParseError):
        span_s("3 seconds")


def test_time_of_a_real_guest() -> None:
    time = parse_time(_sections()["time"])
    assert time is not None and time.finished
    assert time.kernel_s == pytest.approx(22.076) and time.userspace_s == pytest.approx(56.055)
    assert time.total_s == pytest.approx(78.131) and time.initrd_s is None and time.firmware_s is None
    assert time.target == "graphical.target" and time.target_reached_s == pytest.approx(53.793)


def test_time_with_every_phase_and_pasted_text_around() -> None:
    time = parse_time(
        [
            "$ systemd-analyze time",
            "Startup finished in 1.203s (firmware) + 512ms (loader) + 2.146s (kernel) + 1.845s (initrd)"
            " + 1min 8.437s (userspace) = 1min 14.143s",
            "multi-user.target reached after 1min 8.1s in userspace",
        ]
    )
    assert time is not None
    assert (time.firmware_s, time.loader_s, time.kernel_s, time.initrd_s) == pytest.approx(
        (1.203, 0.512, 2.146, 1.845)
    )
    assert time.userspace_s == pytest.approx(68.437) and time.total_s == pytest.approx(74.143)
    assert time.target == "multi-user.target"


def test_bootup_not_finished_is_said_not_invented() -> None:
    time = parse_time(
        [
            "Bootup is not yet finished (org.freedesktop.systemd1.Manager.FinishTimestampMonotonic=0).",
            "Please try again later.",
        ]
    )
    assert time is not None and not time.finished
    assert time.userspace_s is None and time.total_s is None
    assert parse_time(["nothing here"]) is None


def test_blame_of_a_real_guest() -> None:
    blame = parse_blame(_sections()["blame"])
    assert len(blame) == 31
    assert blame[0] == ("dev-vda.device", pytest.approx(31.493))
    assert ("systemd-logind.service", pytest.approx(22.889)) in blame
    assert [s for _, s in blame] == sorted((s for _, s in blame), reverse=True)
    assert parse_blame(["1min 3.044s foo.service", "  820ms bar\\x2dbaz.service", "$ prompt"]) == (
        ("foo.service", pytest.approx(63.044)),
        ("bar\\x2dbaz.service", pytest.approx(0.82)),
    )


def test_critical_chain_of_a_real_guest() -> None:
    chain = parse_critical_chain(_sections()["critical-chain"])
    assert chain[0].unit == "graphical.target" and chain[0].at_s == pytest.approx(53.793)
    assert chain[0].took_s is None and chain[0].depth == 0
    logind = next(link for link in chain if link.unit == "systemd-logind.service")
    assert logind.at_s == pytest.approx(28.716) and logind.took_s == pytest.approx(22.889)
    assert chain[-1].unit == "-.slice" and chain[-1].depth == len(chain) - 1
    ascii_chain = parse_critical_chain(
        ["multi-user.target @8.4s", "`-getty.target @8.3s", "  |-x.service @1s +2ms"]
    )
    assert [(link.unit, link.depth) for link in ascii_chain] == [
        ("multi-user.target", 0),
        ("getty.target", 1),
        ("x.service", 2),
    ]


def test_unit_timestamps_of_a_real_guest() -> None:
    units = parse_unit_show(_sections()["units"])
    assert len(units) > 40
    by_name = {unit.unit: unit for unit in units}
    getty = by_name["serial-getty@ttyS0.service"]
    assert getty.activating_s == pytest.approx(62.783419) and getty.active_s == pytest.approx(62.783419)
    sysctl = by_name["systemd-sysctl.service"]
    assert sysctl.active_s is not None and sysctl.activating_s is not None
    assert sysctl.active_s - sysctl.activating_s == pytest.approx(37.173838 - 35.434416)
    starts = [u.activating_s if u.activating_s is not None else u.active_s for u in units]
    assert starts == sorted(starts)  # type: ignore[type-var]


def test_failed_units() -> None:
    assert parse_failed(["foo.service loaded failed failed Foo", ""]) == ("foo.service",)
    assert parse_failed([]) == ()
