"""Every run records its reproducibility card: the fields of a real small run, read back by
the one log reader, shown by ``m3kit eval``'s summary and the report; never a credential."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from m3kit.benchmarks import run_benchmark_task
from m3kit.benchmarks.m3eval.load import media_files
from m3kit.benchmarks.m3eval.prompt import prompt_template
from m3kit.benchmarks.m3eval.score import scoring_rules
from m3kit.benchmarks.m3eval.task import load_suite_with_skips
from m3kit.harness.card import data_fingerprint, package_version
from m3kit.models.redact import public_base_url, public_model_args
from m3kit.report.build import how_runs_were_made
from m3kit.report.logs import read_run
from m3kit.report.summary import summary_table
from m3kit.schema.card import CARD_KEY, FramePolicyCard, FramesSent, files_fingerprint, text_sha256
from m3kit.synth import SuiteConfig, build_suite

# One pair of 8 s sources, interference only (a few seconds to render).
TINY = SuiteConfig(seed=3, pairs=1, beats=8, beat_seconds=1.0, swaps=[0],
                   paradigms=["interference"], interference_questions=1)
SECRET = "sk-secret-0123456789"
ENV_SECRET = "sk-env-secret-abcdef"


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("synth_for_card")
    build_suite(root, TINY)
    return root


def suite_fingerprint(suite: Path) -> str | None:
    """The data fingerprint of the interference tasks of ``suite``: its question file and the
    probe videos of its interference questions."""
    questions, root, _ = load_suite_with_skips(suite, "interference")
    return data_fingerprint([suite / "questions.jsonl"], media_files(questions, root))


@pytest.fixture(scope="module")
def logged(suite_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", ENV_SECRET)
        return run_benchmark_task("synth_interference", "m3kit/builtin",
                                  task_args={"suite": str(suite_dir), "frames": 4, "max_side": 64},
                                  model_args={"api_key": SECRET, "yes_threshold": 0.5},
                                  log_dir=tmp_path_factory.mktemp("logs"), limit=2)


def test_the_card_of_a_real_run(logged, suite_dir: Path) -> None:
    assert logged.status == "success"
    card = read_run(logged).card
    assert card is not None
    assert (card.m3kit_version, card.inspect_ai_version) == (
        package_version("m3kit"), package_version("inspect_ai"))
    assert (card.benchmark, card.task, card.model) == ("m3eval", "synth_interference",
                                                       "m3kit/builtin")
    assert card.model_args["yes_threshold"] == 0.5
    assert card.frames == FramePolicyCard(policy="uniform", count=4, max_side=64)
    # two samples, each shown the 4 frames asked for
    assert card.frames_sent == FramesSent(samples=2, mean=4.0, min=4, max=4)
    assert card.prompt_template == prompt_template()
    assert card.prompt_sha256 == text_sha256(prompt_template())
    assert card.data_fingerprint == suite_fingerprint(suite_dir)
    # the probe videos are in it: not the question file's fingerprint alone
    assert card.data_fingerprint != files_fingerprint([suite_dir / "questions.jsonl"])
    assert card.scoring == scoring_rules()
    assert (card.blind, card.memory, card.subtitles, card.judge_model) == (
        False, None, None, None)
    # the m3kit task's defaults are part of the generation config
    assert card.generate_config["max_connections"] >= 1


def test_no_credential_reaches_the_card_or_the_log_header(logged) -> None:
    recorded = json.dumps(logged.eval.metadata[CARD_KEY])
    header = logged.eval.model_dump_json()
    for secret in (SECRET, ENV_SECRET):
        assert secret not in recorded
        assert secret not in header


def test_credentials_are_redacted_at_any_depth(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_SECRET)
    args = {"api_key": SECRET, "headers": {"x-api-key": SECRET, "user": "me"},
            "organization": ENV_SECRET, "temperature": 0.2}
    assert public_model_args(args) == {
        "api_key": "***", "headers": {"x-api-key": "***", "user": "me"},
        "organization": "***", "temperature": 0.2}
    assert public_base_url(f"https://me:{SECRET}@host:8000/v1?token=abc&mode=fast") == (
        "https://host:8000/v1?token=***&mode=fast")


def test_the_summary_line_and_the_report_table(logged, suite_dir: Path, tmp_path: Path) -> None:
    fingerprint = suite_fingerprint(suite_dir)
    assert fingerprint is not None
    caption = summary_table(logged).caption
    assert caption == ("run: m3kit/builtin · no memory · frames 4 uniform, max side 64 · "
                       f"not blind · data {fingerprint[:12]}")
    section = how_runs_were_made([("m3kit/builtin", read_run(logged))])
    assert section is not None and section.title == "How each run was made"
    rows = dict(section.tables[0].rows)
    assert rows["data fingerprint"] == fingerprint
    assert rows["frames sent"] == "mean 4, min 4, max 4 (2 samples)"
    assert rows["prompt sha256"] == text_sha256(prompt_template())
    # the hash and the text: the template under the table, collapsed, escaped in the HTML
    assert section.tables[0].details == [("prompt template", prompt_template())]
    import html

    from m3kit.report.html import write_report

    page = write_report([section], tmp_path / "report").read_text(encoding="utf-8")
    assert (f"<details><summary>prompt template</summary><pre>"
            f"{html.escape(prompt_template())}</pre></details>") in page


def test_a_blind_run_records_no_frames(suite_dir: Path, tmp_path: Path) -> None:
    log = run_benchmark_task("synth_interference", "m3kit/builtin",
                             task_args={"suite": str(suite_dir), "blind": True}, log_dir=tmp_path,
                             limit=1)
    card = read_run(log).card
    assert card is not None and card.blind
    assert card.frames == FramePolicyCard(policy="none", count=0)
    assert card.frames_sent == FramesSent(samples=1, mean=0.0, min=0, max=0)
