"""The cache scope holds everything that changes an answer, the endpoint as each provider
resolves it, and never a credential."""

from __future__ import annotations

import json

import pytest
from inspect_ai.model import GenerateConfig, get_model

from m3kit.harness.cache import cache_scope, model_identity, public_url
from m3kit.models.redact import is_secret_name

KEY = "sk-m3kit-scope-0123456789"
A = "http://127.0.0.1:8101/v1"
B = "http://127.0.0.1:8102/v1"


@pytest.fixture
def service(monkeypatch):
    """``service(env_url)``: ``openai-api/svc/m`` pointed at ``env_url`` by ``SVC_BASE_URL``."""

    def make(env_url: str = A, *, key: str = KEY, name: str = "m", **options):
        monkeypatch.setenv("SVC_BASE_URL", env_url)
        monkeypatch.setenv("SVC_API_KEY", key)
        return get_model(f"openai-api/svc/{name}", memoize=False, **options)

    return make


@pytest.fixture
def openai(monkeypatch):
    """``openai(env_url)``: ``openai/gpt-test`` pointed at ``env_url`` by ``OPENAI_BASE_URL``
    (``None``: the variable unset)."""

    def make(env_url: str | None = A, *, key: str = KEY, **options):
        if env_url is None:
            monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
        else:
            monkeypatch.setenv("OPENAI_BASE_URL", env_url)
        monkeypatch.setenv("OPENAI_API_KEY", key)
        monkeypatch.delenv("INSPECT_EVAL_MODEL_BASE_URL", raising=False)
        return get_model("openai/gpt-test", memoize=False, **options)

    return make


def test_scope_is_stable_and_covers_what_changes_answers(service):
    model = service(organization="org-a")
    base = cache_scope(model, memory={"name": "rag", "k": 5}, frames={"n": 96})
    # the same settings in another order, and another instance of the same model
    assert base == cache_scope(service(organization="org-a"), memory={"k": 5, "name": "rag"},
                               frames={"n": 96})
    assert base["memory"] == "rag"
    changed = [
        cache_scope(service(organization="org-b"), memory={"name": "rag", "k": 5},
                    frames={"n": 96}),  # a model argument
        cache_scope(service(organization="org-a", config=GenerateConfig(temperature=0.7)),
                    memory={"name": "rag", "k": 5}, frames={"n": 96}),  # generate config
        cache_scope(service(name="other", organization="org-a"),
                    memory={"name": "rag", "k": 5}, frames={"n": 96}),  # model name
        cache_scope(service(B, organization="org-a"), memory={"name": "rag", "k": 5},
                    frames={"n": 96}),  # endpoint
        cache_scope(model, memory={"name": "rag", "k": 6}, frames={"n": 96}),  # memory
        cache_scope(model, memory={"name": "rag", "k": 5}, frames={"n": 8}),  # frames
    ]
    hashes = [scope["m3kit"] for scope in changed]
    assert base["m3kit"] not in hashes and len(set(hashes)) == len(hashes)


def test_scope_keys_on_the_endpoint_each_provider_resolved(openai, service):
    # openai/: inspect leaves the API's base_url empty and the client reads OPENAI_BASE_URL
    at_a, at_b = openai(A), openai(B)
    assert at_a.api.base_url is None  # what inspect's own cache key sees for both
    assert model_identity(at_a)["endpoint"] == A
    assert model_identity(at_b)["endpoint"] == B
    assert cache_scope(at_a)["m3kit"] != cache_scope(at_b)["m3kit"]
    assert model_identity(openai(None))["endpoint"] == "https://api.openai.com/v1"
    # -M base_url=… and --model-base-url reach get_model as base_url: it wins over the variable
    explicit = openai(A, base_url=B)
    assert model_identity(explicit)["endpoint"] == B
    assert cache_scope(explicit) == cache_scope(at_b)
    # openai-api/<service>/: <SERVICE>_BASE_URL, or an explicit base_url
    svc_a, svc_b = service(A), service(B)
    assert (model_identity(svc_a)["endpoint"], model_identity(svc_b)["endpoint"]) == (A, B)
    assert cache_scope(svc_a)["m3kit"] != cache_scope(svc_b)["m3kit"]
    assert model_identity(service(A, base_url=B))["endpoint"] == B


def test_scope_holds_no_credential(service):
    one = service(key="sk-first-key-000000")
    two = service(key="sk-second-key-11111")
    assert cache_scope(one) == cache_scope(two)  # a rotated key keeps the cache
    with_secrets = service(
        "http://user:hunter2pass@127.0.0.1:8101/v1?api_key=sk-in-query-0000&region=eu",
        default_headers={"Authorization": f"Bearer {KEY}", "X-Trace": "on"},
    )
    identity = model_identity(with_secrets)
    assert identity["endpoint"] == "http://127.0.0.1:8101/v1?region=eu"
    assert identity["model_args"] == {"default_headers": {"X-Trace": "on"}}
    text = json.dumps(identity)
    for secret in (KEY, "hunter2pass", "sk-in-query-0000", "user:"):
        assert secret not in text
    # how a request is sent is not what it answers: m3kit's own max_retries=0 changes nothing
    assert cache_scope(service(max_retries=0)) == cache_scope(service())


def test_public_url():
    assert public_url("HTTPS://u:p@Host.example:8443/v1/?key=abc&x=1") == (
        "https://host.example:8443/v1?x=1")
    assert public_url("http://127.0.0.1:8000/v1/") == "http://127.0.0.1:8000/v1"


@pytest.mark.parametrize(("name", "secret"), [
    ("api_key", True), ("OPENAI_API_KEY", True), ("HF_TOKEN", True), ("x-api-key", True),
    ("AWS_SECRET_ACCESS_KEY", True), ("sessionToken", True), ("apiKey", True),
    ("Authorization", True), ("password", True), ("OAUTH2TOKEN", True),
    ("max_tokens", False), ("tokenizer", False), ("keep_alive", False), ("author", False),
    ("device", False), ("top_k", False), ("organization", False),
])
def test_is_secret_name(name, secret):
    assert is_secret_name(name) is secret
