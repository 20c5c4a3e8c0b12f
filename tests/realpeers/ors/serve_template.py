"""openreward's `orwd init` template env, served on loopback: python serve_template.py TEMPLATE_DIR PORT.

The template's own `__main__` binds 0.0.0.0:8080; this imports its env class and
binds the port given on 127.0.0.1 instead, through `Server(...).run(host=...)`.
"""

import sys

sys.path.insert(0, sys.argv[1])

import server  # noqa: E402  (the template's server.py, found on the path just added)
from openreward.environments import Server  # noqa: E402

if __name__ == "__main__":
    Server([server.BasicEnvironment]).run(host="127.0.0.1", port=int(sys.argv[2]))
