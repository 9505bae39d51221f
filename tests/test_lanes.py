"""`make test`'s lanes (scripts/lanes.py) hold every test of the suite exactly once."""

from __future__ import annotations

from pathlib import Path

from scripts.lanes import BESIDE_IMAGE, IMAGE_LANE, lanes, pytest_argv

ROOT = Path(__file__).resolve().parent.parent


def test_the_image_lane_names_files_that_exist() -> None:
    assert IMAGE_LANE and all((ROOT / path).is_file() for path in IMAGE_LANE)


def test_lanes_split_by_file_and_by_the_alone_mark() -> None:
    image, rest, alone = lanes()
    # The two lanes that run at once leave out the 'alone' tests, which run last by themselves.
    assert image.selection[:2] == rest.selection[:2] == ("-m", "not alone")
    assert alone.selection == ("-m", "alone")
    # The image lane takes its files; the rest takes every other file.
    assert set(image.selection[2:]) == set(IMAGE_LANE + BESIDE_IMAGE)
    assert set(rest.selection[2:]) == {f"--ignore={path}" for path in IMAGE_LANE + BESIDE_IMAGE}


# The session fixtures (tests/conftest.py, tests/store, tests/browser) that start a real part once per
# pytest run: a file that used one would start it a second time in the image lane.
STARTED_PER_RUN = ("two_workers_cluster", "postgres_server", "browser", "default_image")


def test_files_beside_the_image_exist_and_start_nothing_of_their_own() -> None:
    assert BESIDE_IMAGE and not set(BESIDE_IMAGE) & set(IMAGE_LANE)
    for path in BESIDE_IMAGE:
        text = (ROOT / path).read_text()
        assert not [name for name in STARTED_PER_RUN if name in text], path


def test_each_lane_has_its_own_temporary_folder_and_the_shared_seed() -> None:
    image, rest, _ = lanes()
    first = pytest_argv(image, 17, Path("/w"), ["-x"])
    second = pytest_argv(rest, 17, Path("/w"), [])
    assert "--randomly-seed=17" in first and "--randomly-seed=17" in second
    assert "--basetemp=/w/image" in first and "--basetemp=/w/rest" in second
    assert first[-1] == "-x"  # a user's arguments come last
