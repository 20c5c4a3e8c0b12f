"""The rlconform service: targets, background runs, results, dashboard, REST API and CLI."""
