"""Real ORS servers run in the peer venv (RLCONFORM_ORS_PYTHON): our env on ors-sdk, and openreward's template."""
