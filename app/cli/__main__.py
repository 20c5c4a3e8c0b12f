"""`python -m app.cli`: the `rlconform` command without the installed entry point."""

from app.cli import main

raise SystemExit(main())
