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


# -- credentials in URLs and in what a server sends back -------------------------------------

def test_the_credential_query_parameters() -> None:
    from m3kit.models.redact import is_secret_query

    secret = ["sig", "signature", "X-Amz-Signature", "X-Amz-Credential", "X-Amz-Security-Token",
              "X-Goog-Signature", "X-Goog-Credential", "SharedAccessSignature", "token",
              "access_token", "key", "api-key", "apikey", "client_secret", "code", "password",
              "pwd", "auth"]
    public = ["sv", "se", "sp", "sr", "spr", "X-Amz-Date", "X-Amz-Expires",
              "X-Amz-SignedHeaders", "X-Amz-Algorithm", "api-version", "mode", "max_tokens"]
    assert [n for n in secret if not is_secret_query(n)] == []
    assert [n for n in public if is_secret_query(n)] == []


def test_public_base_url_hides_every_credential_query_value() -> None:
    from m3kit.models.redact import public_base_url

    url = ("https://me:pw-123456@acct.blob.core.windows.net/v1?sv=2024-01-01&se=2030&sp=r"
           "&sig=AbC%2Bdef%3D&X-Amz-Credential=AKIA%2F1&X-Amz-Signature=feed&token=T")
    assert public_base_url(url) == (
        "https://acct.blob.core.windows.net/v1?sv=2024-01-01&se=2030&sp=r&sig=***"
        "&X-Amz-Credential=***&X-Amz-Signature=***&token=***")


def test_url_secrets_are_every_form_a_credential_is_quoted_in() -> None:
    import base64

    from m3kit.models.redact import url_secrets

    found = url_secrets("http://bob:p%40ss-word@host/v1?sig=AbC%2Bdef&sv=2024&key=k-123456")
    basic = base64.b64encode(b"bob:p@ss-word").decode()
    assert {"p%40ss-word", "p@ss-word", "bob:p@ss-word", basic, "AbC%2Bdef", "AbC+def",
            "k-123456"} <= set(found)
    assert "2024" not in found and "bob" not in found
    assert url_secrets("http://127.0.0.1:8000/v1") == []


def test_redact_takes_out_the_shapes_of_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    import base64

    from m3kit.models.redact import redact

    monkeypatch.setenv("SOME_API_KEY", "sk-env-0123456789")
    basic = base64.b64encode(b"bob:pw-secret").decode()
    text = (f"500 for key Bearer sk-env-0123456789 (Basic {basic}) at "
            "http://bob:pw@h/v1/?token=T1&sig=S1&sv=2024chat/completions")
    assert redact(text) == ("500 for key Bearer *** (Basic ***) at "
                            "http://***@h/v1/?token=***&sig=***&sv=2024chat/completions")
    # a basic credential is base64 of user:password; "Basic" before a word is left alone
    assert redact("Basic authentication failed") == "Basic authentication failed"


def test_model_secrets_are_collected_by_value(monkeypatch: pytest.MonkeyPatch) -> None:
    from m3kit.models.redact import model_secrets, scrub

    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-0123456789")
    secrets = model_secrets({"default_headers": {"X-Api-Key": "hdr-secret-1"},
                             "proxy": "http://u:proxy-pass-1@p:3128", "temperature": 0.2},
                            urls=["http://h/v1?sig=sig-value-1"], keys=["sk-given-1234"])
    assert {"sk-env-0123456789", "hdr-secret-1", "proxy-pass-1", "sig-value-1",
            "sk-given-1234"} <= set(secrets)
    # by value only: an answer that merely looks like a credential is kept
    answer = {"text": ["The bearer of sk-given-1234 news", "Basic facts"], "n": 3}
    assert scrub(answer, secrets) == {"text": ["The bearer of *** news", "Basic facts"], "n": 3}
