"""The session-server options: the openai-chat preset picker (miles-session by default) and the shared HTTP options."""

import re

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from checks.core import Transcript
from checks.http_options import HttpOptions
from checks.openai.options import OpenAIChatOptions
from checks.session.options import SessionOptions
from checks.session.routes import SessionClient
from tests.app.helpers import service_settings


def test_the_options_extend_the_openai_ones_with_the_miles_session_preset():
    assert issubclass(SessionOptions, OpenAIChatOptions) and issubclass(SessionOptions, HttpOptions)
    options = SessionOptions()
    assert options.preset == "miles-session" and options.profile().error_shape == "miles"
    assert SessionOptions(preset="strict-openai").profile().error_shape == "openai"


def test_the_new_target_form_offers_the_preset_select(tmp_path):
    with TestClient(create_app(service_settings(f"sqlite:///{tmp_path / 'forms.db'}"))) as client:
        html = client.get("/targets/new?kind=session-server").text
    select = re.search(r'<select[^>]*name="opt\.preset"[^>]*>(.*?)</select>', html, re.S)
    assert select is not None, "no preset select"
    choices = re.findall(r'<option[^>]*value="([^"]+)"', select.group(1))
    assert choices == ["strict-openai", "llmock", "miles-session"]
    assert '<option value="">default (miles-session)</option>' in select.group(1)
    assert 'name="opt.api_key" type="password"' in html and 'name="opt.ca_bundle"' in html


async def test_the_session_client_sends_the_key_and_extra_headers(tmp_path):
    options = SessionOptions.model_validate(
        {"api_key": "sk-test", "extra_headers": {"X-Team": "rl"}, "verify_tls": False}
    )
    async with SessionClient("https://127.0.0.1:1", Transcript(1, "t", "t"), 1, options) as http:
        assert http.client.headers["authorization"] == "Bearer sk-test"
        assert http.client.headers["x-team"] == "rl"


def test_a_missing_ca_bundle_is_refused(tmp_path):
    with pytest.raises(ValueError, match="ca_bundle"):
        SessionClient("https://127.0.0.1:1", Transcript(1, "t", "t"), 1, SessionOptions(ca_bundle=str(tmp_path / "x")))
