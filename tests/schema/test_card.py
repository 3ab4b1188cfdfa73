"""The reproducibility card's record: field differences, the data fingerprint, its lines."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from m3kit.errors import SchemaError
from m3kit.schema.card import (
    FramePolicyCard,
    FramesSent,
    ReproCard,
    card_differences,
    file_sha256,
    files_fingerprint,
    text_sha256,
)


def _card(**changes: object) -> ReproCard:
    base = ReproCard.with_prompt(
        "{question}\nAnswer with a letter.", benchmark="m3eval", task="synth_nback",
        model="openai/a", model_args={"temperature": 0},
        frames=FramePolicyCard(policy="uniform", count=8), data_fingerprint="ab" * 32,
        scoring={"invalid": "counted wrong"},
    )
    return base.model_copy(update=changes)


def test_only_the_differing_field_paths_are_listed_and_the_model_is_ignored() -> None:
    a = _card()
    b = _card(model="openai/b", model_args={"temperature": 1},
              frames=FramePolicyCard(policy="uniform", count=16),
              scoring={"invalid": "counted wrong", "fj": "letter"}, memory="rag")
    assert card_differences(a, b) == ["frames.count", "memory", "scoring.fj"]
    assert card_differences(a, b, ignore=()) == [
        "frames.count", "memory", "model", "model_args.temperature", "scoring.fj"]
    assert card_differences(a, a.model_copy()) == []


def test_a_changed_prompt_changes_its_hash_and_differs() -> None:
    a = _card()
    b = ReproCard.with_prompt("{question}\nAnswer with one letter.",
                              **a.model_dump(exclude={"prompt_template", "prompt_sha256"}))
    assert a.prompt_sha256 == hashlib.sha256(b"{question}\nAnswer with a letter.").hexdigest()
    assert card_differences(a, b) == ["prompt_sha256", "prompt_template"]


def test_fingerprint_is_stable_and_one_byte_changes_it(tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.json"
    first.write_bytes(b'{"id": "q1"}\n')
    second.write_bytes(b"[1, 2]")
    fingerprint = files_fingerprint([first, second])
    # by hand: sha256 over the two files' sha256 digests, in order
    inner = hashlib.sha256(b'{"id": "q1"}\n').digest() + hashlib.sha256(b"[1, 2]").digest()
    assert fingerprint == hashlib.sha256(inner).hexdigest()
    # the same bytes elsewhere, under other names: the same fingerprint
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "x").write_bytes(first.read_bytes())
    (copy / "y").write_bytes(second.read_bytes())
    assert files_fingerprint([copy / "x", copy / "y"]) == fingerprint
    # one byte changed, or the order swapped: another fingerprint
    (copy / "y").write_bytes(b"[1, 3]")
    assert files_fingerprint([copy / "x", copy / "y"]) != fingerprint
    assert files_fingerprint([second, first]) != fingerprint
    assert file_sha256(first) == hashlib.sha256(b'{"id": "q1"}\n').hexdigest()


def test_an_unreadable_file_is_a_schema_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(SchemaError) as caught:
        files_fingerprint([tmp_path / "missing.jsonl"])
    assert caught.value.path == str(tmp_path / "missing.jsonl")


def test_frames_sent_statistics() -> None:
    assert FramesSent.of([4, 8, 8]) == FramesSent(samples=3, mean=6.667, min=4, max=8)
    assert FramesSent.of([]) == FramesSent(samples=0)


def test_summary_line_and_frame_policy_text() -> None:
    card = _card(blind=False, memory="rag")
    assert card.summary_line() == ("openai/a · memory rag · frames 8 uniform · not blind · "
                                   f"data {'ab' * 6}")
    unknown = ReproCard(blind=True, frames=FramePolicyCard(policy="none", count=0))
    assert unknown.summary_line() == ("model unknown · no memory · frames none · blind · "
                                      "data unknown")
    fps = FramePolicyCard(policy="fps", fps=0.5, count=64, max_side=448)
    assert _card(frames=fps).frames_text() == "0.5 fps (max 64), max side 448"
    default = FramePolicyCard(policy="uniform", default="96, 144 for repetition")
    assert _card(frames=default).frames_text() == "uniform (96, 144 for repetition)"
    assert text_sha256("") == hashlib.sha256(b"").hexdigest()


def test_media_identities_follow_the_question_files(tmp_path: Path) -> None:
    questions = tmp_path / "q.json"
    questions.write_bytes(b"[]")
    alone = files_fingerprint([questions])
    one, two = "11" * 32, "22" * 32
    with_media = files_fingerprint([questions], [one, two])
    assert with_media != alone
    assert files_fingerprint([questions], [two, one]) != with_media  # order is part of it
    assert files_fingerprint([questions], [one, None]) != with_media  # an absent file counts
    assert files_fingerprint([questions], []) == alone


def test_a_resumed_runs_card_takes_the_task_part_it_was_rebuilt_with() -> None:
    run = _card(m3kit_version="1", generate_config={"temperature": 0},
                frames_sent=FramesSent(samples=2, mean=4.0, min=4, max=4))
    rebuilt = ReproCard(benchmark="m3eval", task="synth_nback", data_fingerprint="cd" * 32,
                        frames=FramePolicyCard(policy="uniform", count=8))
    card = run.with_task_part(rebuilt)
    assert card.data_fingerprint == "cd" * 32 and card.prompt_sha256 is None
    assert (card.model, card.model_args, card.m3kit_version, card.generate_config,
            card.frames_sent) == (run.model, run.model_args, "1", {"temperature": 0},
                                  run.frames_sent)
