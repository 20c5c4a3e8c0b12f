"""`rlconform parity`: exit 0 identical, 1 divergent, 2 could not decide; a golden saved and compared."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def plugrl_server():
    started = []

    def start(*extra: str):
        process = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "reference-server", "plugrl", "--port", "0", *extra],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        started.append(process)
        return re.search(r"ws://[0-9.:]+", process.stdout.readline()).group()

    yield start
    for process in started:
        process.kill()
        process.wait(10)


def test_identical_pair_exits_0_and_a_golden_round_trips(plugrl_server, tmp_path, capsys):
    a, b = plugrl_server(), plugrl_server()
    golden = tmp_path / "golden.json"
    assert main(["parity", "plugrl-server", a, b, "--save-golden", str(golden), "--option", "timeout=5"]) == 0
    assert "identical" in capsys.readouterr().out
    assert main(["parity", "plugrl-server", b, "--golden", str(golden), "--option", "timeout=5"]) == 0


def test_a_golden_of_other_inputs_cannot_decide(plugrl_server, tmp_path, capsys):
    a = plugrl_server()
    golden = tmp_path / "golden.json"
    assert main(["parity", "plugrl-server", a, "--golden", str(golden)]) == 2  # missing file: usage error
    assert main(["parity", "plugrl-server", a, a, "--save-golden", str(golden), "--option", "timeout=5"]) == 0
    assert main(["parity", "plugrl-server", a, "--golden", str(golden), "--option", "rounds=1"]) == 2
    assert "different scripts or inputs" in capsys.readouterr().out


def test_unreachable_target_exits_2(capsys):
    assert main(["parity", "plugrl-server", "ws://127.0.0.1:9", "ws://127.0.0.1:9", "--option", "timeout=1"]) == 2
    assert "could not record" in capsys.readouterr().out


def test_url_b_or_golden_is_required():
    assert main(["parity", "plugrl-server", "ws://127.0.0.1:9"]) == 2


def test_divergent_pair_exits_1_and_names_the_first_path(plugrl_server, capsys):
    a, b = plugrl_server(), plugrl_server("--action-dim", "4")
    assert main(["parity", "plugrl-server", a, b, "--option", "timeout=5"]) == 1
    out = capsys.readouterr().out
    assert "first divergence" in out.lower() and "actions" in out, out
