"""Alembic migrations, run by `app.db.upgrade_database`."""
