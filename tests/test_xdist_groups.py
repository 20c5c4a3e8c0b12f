"""The parallel run keeps a file's tests that share a module-scoped server on one xdist worker.

scripts/test runs `pytest -n N --dist loadgroup`; tests/conftest.py marks such files with `xdist_group`.
pytest-xdist applies the mark by renaming each test's node id, which pytest 9.2 stopped reading: every
worker then set the shared fixture up again (four openenv init templates, four runs of every reference),
with nothing failing. This test runs a small tree with our conftest and counts the processes that set up
one module fixture.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import SERIAL_FILES

REPO_ROOT = Path(__file__).resolve().parents[1]

SHARED = """
import os
import pytest

@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    marker = os.environ["SETUP_LOG"]
    with open(marker, "a") as log:
        log.write(f"{os.getpid()}\\n")
    return 1

@pytest.mark.parametrize("n", range(6))
def test_uses_the_shared_fixture(n, shared):
    assert shared == 1
"""

ALONE = """
import pytest

@pytest.mark.parametrize("n", range(6))
def test_alone(n):
    assert n >= 0
"""


def test_a_file_sharing_a_module_fixture_sets_it_up_on_one_worker(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text("from tests.conftest import *  # noqa: F403\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_shared.py").write_text(SHARED)
    (tmp_path / "tests" / "test_alone.py").write_text(ALONE)
    log = tmp_path / "setups.log"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", "-n", "2"]
        + ["--dist", "loadgroup", "--rootdir", str(tmp_path), str(tmp_path / "tests")],
        cwd=tmp_path,
        env={"PYTHONPATH": str(REPO_ROOT), "SETUP_LOG": str(log), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    setups = log.read_text().split()
    assert len(setups) == 1, f"the module fixture was set up in {len(setups)} worker processes: {setups}"


def test_the_serial_files_of_one_process_tree_share_a_worker() -> None:
    """The serial pass runs on two workers: files that start the same kind of tree (Ray; a model server) stay
    on one, one after another, and the transformers files share their package's server on that worker."""
    assert set(SERIAL_FILES.values()) == {"ray", "models"}
    assert {SERIAL_FILES[path] for path in SERIAL_FILES if "rllink" in path or "tap/" in path} == {"ray"}
    transformers = {group for path, group in SERIAL_FILES.items() if "realpeers/transformers/" in path}
    assert len(transformers) == 1 and SERIAL_FILES["tests/realpeers/vllm/test_vllm_server.py"] in transformers
