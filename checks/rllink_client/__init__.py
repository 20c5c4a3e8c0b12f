"""The rllink-client kind: rlconform plays an RLlib external-inference server and grades the client."""
