"""``m3kit.models.redact.public_model_args``: a credential given as a model argument is
redacted from every other argument too, as the environment's secrets are."""

from __future__ import annotations

import pytest

from m3kit.models.redact import REDACTED, public_model_args


def test_a_given_key_is_redacted_from_the_other_arguments(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    args = {"api_key": "sk-test123", "default_headers": {"X-Custom": "sk-test123"},
            "base_note": "proxy for sk-test123 only", "temperature": 0.2}
    assert public_model_args(args) == {
        "api_key": REDACTED, "default_headers": {"X-Custom": REDACTED},
        "base_note": f"proxy for {REDACTED} only", "temperature": 0.2}


def test_nested_and_listed_secrets_are_collected_first() -> None:
    # the secret sits after the argument that repeats it, and under a nested credential name
    args = {"extra_body": {"note": "tok-abcdefgh"},
            "http": {"auth": ["tok-abcdefgh", "user-xyz123"]}}
    assert public_model_args(args) == {"extra_body": {"note": REDACTED},
                                       "http": {"auth": REDACTED}}


def test_short_values_are_not_treated_as_secrets() -> None:
    # under 6 characters a value is too likely an ordinary word to be redacted elsewhere
    assert public_model_args({"token": "abc", "mode": "abc"}) == {"token": REDACTED,
                                                                  "mode": "abc"}
