"""A decompression bomb in an M3Exam round (a whole 30000 x 30000 PNG, 9e8 pixels in about
110 KB) never leaves the machine: under the direct regimes and the ``context`` memory, against a
local OpenAI-compatible server that records every request, no request carries it, its skip is
named once after the run, its round keeps its text and every question of the session is
answered; under ``m3kit/builtin`` (which reads the images it is sent) too."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log
from PIL import Image

from fakeserver import ScriptedServer
from m3kit.cli.main import main
from m3kit.schema import read_record

from ...media.test_image import png_bomb

pytestmark = pytest.mark.usefixtures("isolated_dirs")

QUESTIONS = ("q1", "q2", "q3", "q4")


@pytest.fixture(scope="module")
def persona(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """One session of three rounds, the first with a photo and the bomb; four questions on it
    (each prompt carries ``qid=<id>``, the scripted server's key)."""
    folder = tmp_path_factory.mktemp("m3exam") / "Bo_Bomb"
    (folder / "images").mkdir(parents=True)
    Image.new("RGB", (40, 30), (200, 30, 30)).save(folder / "images" / "img_1.png")
    bomb = png_bomb(folder / "images" / "img_2.png")
    rounds = [
        {"round": "D1:1", "user": "Photos of my fox and the barn.", "assistant": "Nice.",
         "img_file": ["img_1.png", "img_2.png"], "img_id": [1, 2],
         "img_description": ["a red fox", "a barn"]},
        {"round": "D1:2", "user": "My cat Miso has a sore paw.", "assistant": "Rest it."},
        {"round": "D1:3", "user": "My dog is called Rex.", "assistant": "Good name."},
    ]
    (folder / "sessions.json").write_text(json.dumps(
        [{"session_id": "D1", "date": "2024-02-01", "dialogues": rounds}]))
    asked = [("What is the cat called?", "Miso", "D1:2"), ("What is the dog called?", "Rex",
                                                           "D1:3"),
             ("Which animal is in the photo?", "fox", "D1:1"),
             ("Which building is in the photo?", "barn", "D1:1")]
    (folder / "question.json").write_text(json.dumps([
        {"question": f"{text} qid={qid}", "answer": [answer], "supporting_facts": facts,
         "type": "ss"} for qid, (text, answer, facts) in zip(QUESTIONS, asked, strict=True)]))
    return folder, bomb


def _run(persona: Path, model: str, log_dir: Path, *args: str) -> int:
    return main(["eval", "m3exam", "-T", f"data={persona}", "--model", model, "--log-dir",
                 str(log_dir), *args])


def _log_records(log_dir: Path) -> dict[str, dict]:
    (path,) = log_dir.glob("*.eval")
    log = read_eval_log(str(path))
    return {str(s.metadata["question"]["text"]).split("qid=")[1]: read_record(s.metadata)
            for s in log.samples or []}


def _skip_lines(out: str, stage: str) -> list[str]:
    lines = out.splitlines()
    start = lines.index(f"skipped 1 attachment(s) {stage}:")
    return lines[start + 1 : start + 2]


@pytest.mark.parametrize(("args", "stage"), [
    (["-T", "regime=oracle"], "not sent to the model"),
    (["-T", "regime=full"], "not sent to the model"),
    (["--memory", "context"], "at memory ingest"),
])
def test_no_request_carries_the_bomb(
    persona: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
    scripted: Callable[..., ScriptedServer], serve: Callable[..., str], args: list[str],
    stage: str,
) -> None:
    folder, bomb = persona
    server = scripted()
    code = _run(folder, serve("scripted", server), tmp_path / "logs", "--no-cache", *args)
    out = capsys.readouterr().out
    assert code == 0, out
    # every question of the session answered, none failed
    assert sorted(server.answered_keys()) == list(QUESTIONS)
    records = _log_records(tmp_path / "logs")
    assert sorted(records) == list(QUESTIONS)
    assert all(r is not None and r.failure is None for r in records.values())
    # the bomb is in no request; the photo beside it is, in each
    payload = base64.b64encode(bomb.read_bytes()[:4096]).decode("ascii")[:1000]
    sent = [url for r in server.records for url in r.image_urls]
    assert sent and not any(payload in url for url in sent)
    assert all(len(r.image_urls) == 1 and len(r.image_urls[0]) < 10_000 for r in server.records)
    # named once after the run, by file, round/attachment and reason
    (line,) = _skip_lines(out, stage)
    assert line.startswith(f"  {bomb}: record D1:1/img_2: ")
    assert "over the bound of 89478485 pixels" in line
    assert out.count("img_2.png") == 1
    if stage == "not sent to the model":  # the round keeps its text, and says why
        for request in server.records:
            assert "Photos of my fox and the barn." in request.prompt
            assert "(attached image img_2, not shown: too large to send)" in request.prompt


def test_builtin_answers_every_question_of_the_session(
    persona: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # m3kit/builtin reads (OCRs) every image it is sent: handed the bomb, each call failed
    folder, bomb = persona
    code = _run(folder, "m3kit/builtin", tmp_path / "logs")
    out = capsys.readouterr().out
    assert code == 0, out
    records = _log_records(tmp_path / "logs")
    assert sorted(records) == list(QUESTIONS)
    assert all(r is not None and r.failure is None for r in records.values())
    assert all(r.usage.images_sent == 1 for r in records.values())
    (line,) = _skip_lines(out, "not sent to the model")
    assert line.startswith(f"  {bomb}: record D1:1/img_2: ")
