#!/usr/bin/env python3
"""Check OpenEnv's own envs (the `envs/` of an OpenEnv checkout) with the suite's default options, on both lines.

Not run in CI: CI cannot fetch the OpenEnv repository, and its code may not enter ours. Anyone with a
checkout repeats docs/real-peers.md's "OpenEnv's own envs (checked by hand)" with:

    .venv/bin/python scripts/check_upstream_openenv.py /path/to/OpenEnv \\
        --line 0.10.0=$HOME/.cache/rlconform-peers/oe10/bin/python \\
        --line 0.3.0=$HOME/.cache/rlconform-peers/oe03/bin/python \\
        [--extra-path DIR] [--env echo_env ...] [--json-dir DIR] [--dipg DIPG_VENV/bin/python]

Each env is served from `<checkout>/envs` by uvicorn from the line's venv (`<env>.server.app:app`) on a
socket bound here to a free 127.0.0.1 port, checked with `rlconform check openenv URL --json`, and
stopped (its whole process group) before the next one starts. `--extra-path` is put on the server's
PYTHONPATH after `envs/`: a `pip install --target DIR --no-deps` of what the envs import beyond the
venv (chess, moonfish, reasoning-gym, smolagents, open-spiel, ale-py, gymnasium, ...). The checkout's
own `src/` is never on the path: the venv's installed openenv is the line under test. `--dipg` also serves
the PyPI package openenv-dipg-safety (`pip install openenv-dipg-safety` in a venv of its own) offline, on a
three-row dataset written for the run.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

# The envs that serve on CPU with PyPI packages only (no Docker, GPU, or download at start), with
# what each needs in its environment to stay offline and small.
ENVS: dict[str, dict[str, str]] = {
    "echo_env": {},
    "connect4_env": {},
    "chess_env": {},
    "grid_world_env": {},
    "maze_env": {},
    "wildfire_env": {},
    "reasoning_gym_env": {},
    "coding_env": {},
    "openspiel_env": {},
    "atari_env": {},
}
# openenv-dipg-safety (PyPI, module med_safety_gym) loads the dataset DIPG_DATASET_PATH names, a hub id by
# default: served with three rows written here (a context and a question in the user turn, then the answer).
DIPG = "openenv-dipg-safety"
DIPG_ROWS = "".join(
    json.dumps({"messages": [{"role": "user", "content": f"<context>{c}</context>\n<question>{q}</question>"},
                             {"role": "assistant", "content": a}]}) + "\n"
    for c, q, a in (
        ("Drug A was given to 10 patients; 3 responded.", "How many patients responded to drug A?", "3"),
        ("Trial B enrolled 20 children.", "How many children did trial B enrol?", "20"),
        ("Study C reported no survival benefit.", "Did study C report a survival benefit?", "no"),
    )
)  # fmt: skip
COUNTS = ("pass", "fail", "warn", "info", "unsupported", "skip", "error")
START_DEADLINE = 120.0  # seconds for an env to answer /health: some import scipy or open_spiel on shared cores
CHECK_DEADLINE = 600.0  # seconds for one run of the suite


def bound_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    return sock


def start(
    python: str, cwd: Path, app: str, path: list[str], env: dict[str, str], sock: socket.socket, log: Path
) -> subprocess.Popen:
    command = [python, "-m", "uvicorn", app, "--fd", str(sock.fileno()), "--log-level", "warning"]
    with log.open("w") as out:
        return subprocess.Popen(
            command, cwd=cwd, pass_fds=(sock.fileno(),), stdout=out, stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(path), **env}, start_new_session=True,
        )  # fmt: skip


def stop(process: subprocess.Popen) -> None:
    """The server's whole session: uvicorn and anything the env started (executors, pools)."""
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def wait_up(url: str, process: subprocess.Popen) -> str | None:
    """None once /health answers; else why not (the server exited, or the deadline passed)."""
    deadline = time.monotonic() + START_DEADLINE
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return f"exited {process.returncode}"
        try:
            with urllib.request.urlopen(url + "/health", timeout=2):
                return None
        except OSError:
            time.sleep(0.5)
    return f"no /health within {START_DEADLINE:.0f} s"


def check(rlconform: str, url: str, report: Path) -> dict[str, object]:
    command = [rlconform, "check", "openenv", url, "--json", str(report), "--quiet"]
    try:
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=CHECK_DEADLINE)
    except subprocess.TimeoutExpired:
        return {"why": f"the suite took over {CHECK_DEADLINE:.0f} s"}
    if not report.is_file():
        return {"why": "the suite wrote no report"}
    data = json.loads(report.read_text())
    faults = [f"{c['clause_id']}={c['verdict']}" for c in data["clauses"] if c["verdict"] in ("fail", "warn", "error")]
    return {"counts": data["counts"], "faults": faults}


def run_one(args: argparse.Namespace, label: str, line: str, python: str, out: Path) -> dict[str, object]:
    """One env on one line: served, checked, stopped; the DIPG package is served from its own venv."""
    if label == DIPG:
        data = out / "dipg-tiny.jsonl"
        data.write_text(DIPG_ROWS)
        cwd, app, path = out, "med_safety_gym.app:app", []
        env = {"DIPG_DATASET_PATH": str(data), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    else:
        cwd, app, env = args.checkout / "envs", f"{label}.server.app:app", ENVS.get(label, {})
        path = [str(cwd)] + ([args.extra_path] if args.extra_path else [])
    sock = bound_socket()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    log = out / f"{label}-{line}.log"
    process = start(python, cwd, app, path, env, sock, log)
    try:
        why = wait_up(url, process)
        if why is not None:
            tail = log.read_text(errors="replace").strip().splitlines()[-1:] or [""]
            return {"why": f"did not serve: {why}: {tail[0][:160]}"}
        return check(args.rlconform, url, out / f"{label}-{line}.json")
    finally:
        stop(process)
        sock.close()


def table(rows: list[tuple[str, str, dict[str, object]]]) -> str:
    lines = ["| env | line | " + " | ".join(COUNTS) + " | fail, warn, error |", "|---" * (len(COUNTS) + 3) + "|"]
    for env, line, result in rows:
        if "counts" not in result:
            lines.append(f"| {env} | {line} | " + " | ".join("-" for _ in COUNTS) + f" | {result['why']} |")
            continue
        counts = result["counts"]
        assert isinstance(counts, dict)
        faults = ", ".join(result["faults"]) or "none"  # type: ignore[arg-type]
        lines.append(f"| {env} | {line} | " + " | ".join(str(counts.get(k, 0)) for k in COUNTS) + f" | {faults} |")
    return "\n".join(lines)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkout", type=Path, help="an OpenEnv checkout (holds envs/)")
    parser.add_argument("--line", action="append", default=[], help="NAME=PYTHON of a venv with openenv installed")
    parser.add_argument("--extra-path", help="a directory of the envs' extra packages, put on PYTHONPATH")
    parser.add_argument("--env", action="append", help=f"an env to check (repeatable); default: {', '.join(ENVS)}")
    parser.add_argument("--json-dir", type=Path, help="keep each run's report and server log here")
    parser.add_argument("--dipg", metavar="PYTHON", help=f"also check {DIPG}, installed in this venv's python")
    default = Path(sys.executable).with_name("rlconform")
    parser.add_argument("--rlconform", default=str(default), help="the rlconform command (default: %(default)s)")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse(argv)
    lines = [tuple(item.split("=", 1)) for item in args.line]
    rows: list[tuple[str, str, dict[str, object]]] = []
    with tempfile.TemporaryDirectory() as scratch:
        out = args.json_dir or Path(scratch)
        out.mkdir(parents=True, exist_ok=True)
        runs = [(env, line, python) for env in args.env or list(ENVS) for line, python in lines]
        runs += [(DIPG, "its own venv", args.dipg)] if args.dipg else []
        for label, line, python in runs:
            result = run_one(args, label, line, python, out)
            print(f"{label} on {line}: {result.get('counts') or result.get('why')}", file=sys.stderr, flush=True)
            rows.append((label, line, result))
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
