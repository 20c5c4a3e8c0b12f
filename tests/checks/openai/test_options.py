"""The capability profile, its presets, and the shared HTTP options."""

from __future__ import annotations

import pydantic
import pytest

from app.web.options_form import fields_from_schema
from checks.http_options import HttpOptions
from checks.openai.options import PRESETS, OpenAIChatOptions


def test_presets_fill_the_profile_and_fields_override_them():
    assert OpenAIChatOptions().profile() == PRESETS["strict-openai"]
    llmock = OpenAIChatOptions(preset="llmock").profile()
    assert not llmock.logprobs and not llmock.max_tokens and llmock.streaming
    forced = OpenAIChatOptions.model_validate({"preset": "llmock", "logprobs": True, "context_window": 512}).profile()
    assert forced.logprobs and forced.context_window == 512
    assert OpenAIChatOptions(preset="miles-session").profile().error_shape == "miles"
    with pytest.raises(pydantic.ValidationError):
        OpenAIChatOptions.model_validate({"preset": "nonesuch"})


def test_the_engine_presets_say_what_each_engine_offers():
    vllm, litellm, llama = (OpenAIChatOptions(preset=name).profile() for name in ("vllm", "litellm", "llama-cpp"))
    assert vllm.logprobs and vllm.tools and vllm.n_choices and vllm.stream_usage
    assert not vllm.deterministic and not vllm.strict_validation
    assert litellm.tools and not litellm.strict_validation and litellm.error_shape == "openai"
    assert llama.logprobs and llama.tools and llama.deterministic
    assert not (llama.parallel_tool_calls or llama.n_choices or llama.stream_usage or llama.strict_validation)
    assert OpenAIChatOptions(preset="llama-cpp", n_choices="yes").profile().n_choices


def test_the_form_offers_presets_and_profile_fields_as_selects_and_the_key_as_a_password():
    fields = {f.name: f for f in fields_from_schema(OpenAIChatOptions.model_json_schema())}
    assert fields["preset"].widget == "select"
    assert fields["preset"].choices == ["strict-openai", "llmock", "miles-session", "vllm", "litellm", "llama-cpp"]
    assert fields["logprobs"].widget == "select" and fields["logprobs"].choices == ["preset", "yes", "no"]
    assert fields["api_key"].widget == "password"
    assert fields["verify_tls"].widget == "checkbox" and fields["verify_tls"].default is True


def test_http_options_send_a_bearer_key_and_refuse_header_injection(tmp_path):
    options = HttpOptions.model_validate({"api_key": "sk-1", "extra_headers": {"X-Team": "rl"}})
    assert options.request_headers() == {"X-Team": "rl", "Authorization": "Bearer sk-1"}
    assert "sk-1" not in repr(options)
    with pytest.raises(pydantic.ValidationError):
        HttpOptions.model_validate({"extra_headers": {"X-Bad": "a\r\nInjected: 1"}})
    assert HttpOptions(verify_tls=False).tls_verify() is False
    with pytest.raises(ValueError):
        HttpOptions(ca_bundle=str(tmp_path / "missing.pem")).tls_verify()
