"""Regenerate the committed *_pb2.py / *_pb2_grpc.py beside these .proto files.

Run from anywhere: `python checks/rlmesh/proto/generate.py` (needs grpcio-tools,
the project's `test` extra). The import root is the repository, so generated
modules import each other as `checks.rlmesh.proto.*`.
"""

from __future__ import annotations

import sys
from pathlib import Path

PROTO_DIR = Path(__file__).resolve().parent
ROOT = PROTO_DIR.parents[2]
PROTOS = ["spaces.proto", "core.proto", "env.proto"]


def main() -> int:
    from grpc_tools import protoc  # noqa: PLC0415  (a test-extra dependency)

    include = str(Path(protoc.__file__).parent / "_proto")
    files = [str((PROTO_DIR / name).relative_to(ROOT)) for name in PROTOS]
    args = ["protoc", f"-I{ROOT}", f"-I{include}", f"--python_out={ROOT}", f"--grpc_python_out={ROOT}", *files]
    status = protoc.main(args)
    if status == 0:
        # Only env.proto declares a service; the others' empty grpc modules are noise.
        for name in ("spaces_pb2_grpc.py", "core_pb2_grpc.py"):
            (PROTO_DIR / name).unlink(missing_ok=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
