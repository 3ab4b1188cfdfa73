"""``m3kit.models.credentials``: a model recorded without its credentials while it connects with
them, and a server that quotes a key back, scrubbed before anything keeps the reply (the
construction pipelines' call transcript here; runs, reports and exports in
``tests/harness/test_credentials.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from m3kit.models.backend import BackendRequest, InspectBackend
from m3kit.models.call_cache import CachedBackend
from m3kit.models.credentials import keep_credentials, scrub_exception

pytestmark = pytest.mark.usefixtures("isolated_dirs")


def test_the_recorded_model_is_public_and_the_provider_keeps_the_real_url(scripted) -> None:
    from inspect_ai.model import get_model

    server = scripted()
    url = f"http://bob:pw-0123456789@127.0.0.1:{server.port}/v1?sig=sig-0123456789&sv=2024"
    model = get_model("openai-api/creds/scripted", base_url=url, api_key="sk-given-0123456789",
                      memoize=False, default_headers={"X-Api-Key": "hdr-0123456789"},
                      default_query={"sig": "sig-0123456789"},
                      organization="org of sk-given-0123456789")
    assert keep_credentials(model) is model
    assert model.explicit_base_url == (
        f"http://127.0.0.1:{server.port}/v1?sig=***&sv=2024")
    assert model.model_args == {"default_headers": {"X-Api-Key": "***"},
                                "default_query": {"sig": "***"}, "organization": "org of ***"}
    assert model.api.base_url == url  # what it connects with
    generate = model.api.generate
    assert keep_credentials(model).api.generate is generate  # guarded once


def test_a_key_the_server_quotes_never_reaches_the_transcript(scripted, serve, secret,
                                                              tmp_path: Path) -> None:
    server = scripted(answers={"q1": f"you sent Bearer {secret}, fine"})
    transcript = tmp_path / "calls.jsonl"
    inner = InspectBackend(serve("quoting", server), max_attempts=1)
    try:
        reply = CachedBackend(inner, transcript).complete(BackendRequest("s", "v1", "qid=q1"))
    finally:
        inner.close()
    assert reply == "you sent Bearer ***, fine"
    assert secret not in transcript.read_text()


def test_an_error_keeps_its_type_and_loses_the_key() -> None:
    class StatusError(Exception):
        def __init__(self, message: str, body: dict) -> None:
            super().__init__(message)
            self.message, self.body = message, body

    try:
        try:
            raise OSError("behind: key sk-0123456789")
        except OSError as cause:
            raise StatusError("500: internal error for key sk-0123456789",
                              {"error": {"message": "key sk-0123456789"}}) from cause
    except StatusError as exc:
        assert scrub_exception(exc, ["sk-0123456789"]) is exc
        assert str(exc) == exc.message == "500: internal error for key ***"
        assert exc.body == {"error": {"message": "key ***"}}
        assert str(exc.__cause__) == "behind: key ***"
