"""Regenerate the committed *_pb2.py / *_pb2_grpc.py / *_pb2.pyi beside these .proto files.

Run from anywhere: `python checks/rlmesh/proto/generate.py` (needs grpcio-tools,
the project's `test` extra, and ruff, the `dev` extra). The import root is the
repository, so generated modules import each other as `checks.rlmesh.proto.*`.
The .pyi stubs let mypy check the phases against the real message types; ruff
lints stubs, so they are fixed and formatted to the project's style here.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROTO_DIR = Path(__file__).resolve().parent
ROOT = PROTO_DIR.parents[2]
PROTOS = ["spaces.proto", "core.proto", "env.proto"]


def main() -> int:
    from grpc_tools import protoc  # noqa: PLC0415  (a test-extra dependency)

    include = str(Path(protoc.__file__).parent / "_proto")
    files = [str((PROTO_DIR / name).relative_to(ROOT)) for name in PROTOS]
    outputs = [f"--python_out={ROOT}", f"--grpc_python_out={ROOT}", f"--pyi_out={ROOT}"]
    status = protoc.main(["protoc", f"-I{ROOT}", f"-I{include}", *outputs, *files])
    if status != 0:
        return status
    # Only env.proto declares a service; the others' empty grpc modules are noise.
    for name in ("spaces_pb2_grpc.py", "core_pb2_grpc.py"):
        (PROTO_DIR / name).unlink(missing_ok=True)
    stubs = [str(PROTO_DIR / name.replace(".proto", "_pb2.pyi")) for name in PROTOS]
    ruff = [sys.executable, "-m", "ruff"]
    subprocess.run([*ruff, "check", "--fix-only", "--quiet", *stubs], cwd=ROOT, check=False)
    return subprocess.run([*ruff, "format", "--quiet", *stubs], cwd=ROOT, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
