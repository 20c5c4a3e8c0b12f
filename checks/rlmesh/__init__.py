"""The `rlmesh` target kind: RLMesh env services (`rlmesh-wire-v1`, gRPC)."""
