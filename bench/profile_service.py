"""Where the service's CPU goes during 100 queued PlugRL runs: the writer's share of py-spy samples.

Starts reference PlugRL servers and one `rlconform serve` (SQLite, `--run-processes` run
processes beside the web process), adds `--concurrent` targets on them, queues a run of each
at once, and samples the web process and its run processes (`py-spy record --subprocesses`)
until the runs end. It prints the samples of all those processes, the share spent in
the service's writer (`write_batches` and everything below it, the run's end
`EndWriter.write`, and `stored_clauses` where a checkout still has it) and the biggest
other shares by function, so the number issue 31 asks for is one command:

    python bench/profile_service.py [--concurrent 100] [--run-processes 2] [--gil] [--checkout DIR] [--keep FILE]

py-spy counts a thread waiting in C (on SQLite's lock, on a thread pool's queue) as active, so by
default the share is of every sampled stack; `--gil` samples only the thread holding the GIL in
each process, which leaves the waiting out and is closer to where the CPU goes.

`--checkout DIR` runs the service from another checkout of the project (for instance an older
revision added with `git worktree add`), with this venv, so two revisions are profiled the same way.
"""

from __future__ import annotations

import argparse
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.service import (  # noqa: E402
    ROOT,
    _await_ended,
    queue_every_target,
    service_with_targets,
    start_reference_servers,
)

# A frame of the writer: py-spy's raw format writes a frame as "function (path:line)". `write_batches` moved
# from app/recording.py to app/batch_writes.py; both are matched, so older checkouts are profiled the same way.
WRITER = r"write_batches|EndWriter\.write|stored_clauses|_run_counts"
WRITER_FRAME = re.compile(rf"^({WRITER}) \([^)]*app/(recording|batch_writes)\.py:\d+\)$")
# Innermost frames of a thread with nothing to do (py-spy does not tell these idle here): a thread pool's
# worker waiting for work, a condition or event wait, an event loop waiting in its selector.
IDLE_LEAF = re.compile(
    r"^(_worker \(concurrent/futures/thread|(Condition|Event)\.wait \(threading|\w+Selector\.select )"
)


def writer_share(raw: str) -> tuple[int, int, int, Counter[str]]:
    """(all samples, idle ones, the writer's, samples by innermost app/checks function) of py-spy raw output."""
    total = idle = writer = 0
    leaves: Counter[str] = Counter()
    for line in raw.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = stack.split(";")
        total += count
        idle += count if IDLE_LEAF.match(frames[-1]) else 0
        if any(WRITER_FRAME.match(frame) for frame in frames):
            writer += count
        ours = [frame for frame in frames if "app/" in frame or "checks/" in frame]
        leaves[(ours[-1] if ours else frames[-1]).rsplit(":", 1)[0] + ")"] += count
    return total, idle, writer, leaves


def profiled_runs(
    checkout: Path, workdir: Path, concurrent: int, urls: list[str], processes: int, out: Path, gil: bool
) -> float:
    """Queue `concurrent` runs in a fresh service from `checkout`, sampled until they end; returns the wall time."""
    spy = Path(sys.executable).parent / "py-spy"
    record = [str(spy) if spy.exists() else "py-spy", "record", "-r", "50", "-f", "raw", "--subprocesses"]
    record += ["--gil"] if gil else []
    with service_with_targets(workdir, "profile.db", concurrent, urls, processes, checkout) as (client, serve):
        time.sleep(2.0)  # the run processes are up and idle before sampling starts
        profiler = subprocess.Popen(
            [*record, "-o", str(out), "--pid", str(serve.pid)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        began = time.perf_counter()
        statuses = _await_ended(client, queue_every_target(client, concurrent))
        elapsed = time.perf_counter() - began
        profiler.send_signal(signal.SIGINT)
        profiler.wait(timeout=60)
        print(f"runs ended: {dict(statuses)} in {elapsed:.1f} s")
    return elapsed


def profile(args: argparse.Namespace) -> str:
    """Profile a fresh service's runs as `args` say; py-spy's raw stacks."""
    processes, urls = start_reference_servers(args.servers)
    try:
        with tempfile.TemporaryDirectory(prefix="rlconform-profile-") as workdir:
            out = args.keep or Path(workdir) / "stacks.txt"
            checkout = args.checkout.resolve()
            profiled_runs(checkout, Path(workdir), args.concurrent, urls, args.run_processes, out, args.gil)
            return out.read_text()
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrent", type=int, default=100)
    parser.add_argument("--servers", type=int, default=5, help="reference servers the runs share")
    parser.add_argument("--run-processes", type=int, default=2, help="RLCONFORM_RUN_PROCESSES of the service")
    parser.add_argument("--checkout", type=Path, default=ROOT, help="the checkout whose service is profiled")
    parser.add_argument("--gil", action="store_true", help="sample only threads holding the GIL")
    parser.add_argument("--keep", type=Path, help="also keep py-spy's raw stacks in this file")
    parser.add_argument("--stacks", type=Path, help="only read raw stacks kept before (--keep) and print their shares")
    args = parser.parse_args()
    raw = args.stacks.read_text() if args.stacks else profile(args)
    total, idle, writer, leaves = writer_share(raw)
    if not total:
        raise SystemExit("py-spy recorded no samples (is ptrace allowed here?)")
    which = "GIL-holding samples" if args.gil else "samples"
    print(f"{total} {which} of the web process and its {args.run_processes} run processes, {args.checkout.resolve()}")
    print(f"writer (write_batches and below, the end writer): {writer} = {writer / total:.1%}")
    if idle and total > idle:
        print(f"  of the {total - idle} not idle ({idle} were idle waits): {writer / (total - idle):.1%}")
    print("by innermost function of app/ or checks/ (else the innermost):")
    for name, count in leaves.most_common(10):
        print(f"  {count / total:6.1%}  {name}")


if __name__ == "__main__":
    main()
