"""The m3exam inspect task end to end with ``m3kit/builtin``: every regime, costs, failures."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from m3kit.benchmarks import run_benchmark_task
from m3kit.benchmarks.m3exam.item import score_item as item_record
from m3kit.benchmarks.m3exam.task import M3EXAM_KEY, conversation_stream
from m3kit.media.pdf import write_text_pdf
from m3kit.memory.base import AnswerRequest, Memory, MemoryAnswer, MemoryEvent, MemoryItem
from m3kit.schema import Question, Usage, read_record
from m3kit.schema.evallog import SKIPPED_KEY

SCORER = "m3exam_answer"
# OCR is the builtin model's slowest part and irrelevant to what is tested here.
NO_OCR = {"ocr": False}


@pytest.fixture(scope="module")
def persona(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two sessions; D2:1 has two images and a two-page PDF; four questions of four types."""
    folder = tmp_path_factory.mktemp("m3exam") / "Pat_Tester"
    (folder / "images").mkdir(parents=True)
    (folder / "pdfs").mkdir()
    for n in (1, 2, 3):
        Image.new("RGB", (40, 30), (60 * n, 20, 20)).save(folder / "images" / f"img_{n}.jpg")
    write_text_pdf(folder / "pdfs" / "labs.pdf", ["Glucose 5.4 mmol/L", "ALT 40 U/L"])
    sessions = [
        {"session_id": "D1", "date": "2024-01-01", "dialogues": [
            {"round": "D1:1", "user": "My cat Miso has a sore paw.",
             "assistant": "Keep the paw clean and rest it.", "img_file": ["img_1.jpg"],
             "img_id": [1], "img_description": ["a grey cat licking its paw"]},
        ]},
        {"session_id": "D2", "date": "2024-01-09", "dialogues": [
            {"round": "D2:1", "user": "Lab report and ward photos attached.",
             "assistant": "The glucose is 5.4 mmol/L, normal.",
             "img_file": ["img_2.jpg", "img_3.jpg"], "img_id": [2, 3],
             "img_description": ["a ward with cages", "a dog on an exam table"],
             "pdf_file": ["labs.pdf"]},
        ]},
    ]
    questions = [
        {"question": "What was the glucose value?", "answer": ["5.4 mmol/L", "5.4"],
         "label": "5.4 mmol/L", "supporting_facts": "D2:1", "type": "mr"},
        {"question": "Which image shows the dog? Return img_<number>.",
         "answer": ["img_3", "img_2"], "label": "img_3", "supporting_facts": "D2:1",
         "type": "fm"},
        {"question": "What is the cat called?\n(A) Miso\n(B) Tofu\nOutput only the letter.",
         "answer": ["A"], "label": "A", "supporting_facts": "D1:1", "type": "fj"},
        {"question": "Where is the ghost round?", "answer": ["nowhere"], "label": "nowhere",
         "supporting_facts": "D7:1", "type": "ss"},
    ]
    (folder / "sessions.json").write_text(json.dumps(sessions))
    (folder / "question.json").write_text(json.dumps(questions))
    return folder


def _run(data: Path, tmp_path: Path, regime: str, **kwargs):
    task_args = {"data": str(data), "regime": regime, **kwargs.pop("task_args", {})}
    log = run_benchmark_task("m3exam", "m3kit/builtin", task_args=task_args, model_args=NO_OCR,
                             log_dir=tmp_path / "logs", **kwargs)
    assert log.status == "success", log.error
    return {s.id: s for s in log.samples}, log



def score_item(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """The scorer's per-item record as the score's metadata holds it."""
    return item_record(*args, **kwargs).to_metadata()

def test_score_item_by_hand() -> None:
    q = Question(id="p/0", benchmark="m3exam", text="?", answer="Medial Saphenous Vein",
                 alternatives=["Cephalic Vein", "Jugular Vein"], question_type="ss",
                 metadata={"label": "Medial Saphenous Vein"})
    item = score_item(q, "Cephalic vein.")
    # Sentence-normalised "cephalic vein" is answer-list entry 1: EM = 1/2**1 = 0.5.
    assert item["em"] == 0.5 and item["in_total"] is True and item["status"] == "incorrect"
    # F1 vs the label: pred {cephalic, vein}, gold {medial, saphenous, vein}, overlap 1:
    # P = 1/2, R = 1/3, F1 = 2 * (1/6) / (5/6) = 0.4.
    assert item["f1"] == pytest.approx(0.4)
    # BLEU-1: clipped precision 1/2; 2 < 3 tokens so BP = exp(1 - 3/2) = 0.60653: 0.30327.
    assert item["bleu1"] == pytest.approx(0.5 * math.exp(-0.5))
    failed = score_item(q, "Medial Saphenous Vein", failure="model: boom")
    assert failed["em"] == 0.0 and failed["f1"] == 0.0 and failed["status"] == "failed"
    fm = Question(id="p/1", benchmark="m3exam", text="?", answer="img_60",
                  alternatives=["img_61"], question_type="fm")
    assert score_item(fm, "img_60")["em"] == 1.0
    assert score_item(fm, "img_60")["status"] == "correct"
    # The hard negative img_61 named too: no credit (the released code's bug not copied).
    assert score_item(fm, "img_60 or img_61")["em"] == 0.0
    assert score_item(fm, "img_60")["f1"] is None
    fj = Question(id="p/2", benchmark="m3exam", text="?", answer="C", question_type="fj")
    assert score_item(fj, "C")["em"] == 1.0 and score_item(fj, "C")["in_total"] is False


def test_score_item_fj_rule_by_hand() -> None:
    fj = Question(id="p/2", benchmark="m3exam", text="?", answer="C", question_type="fj")
    # the paper's rule: the whole normalised answer must be the letter ("c." -> "c")
    assert score_item(fj, "c.")["em"] == 1.0
    stated = score_item(fj, "The answer is C")
    assert stated["em"] == 0.0 and stated["status"] == "incorrect"
    # m3kit's addition: the letter the answer states
    stated = score_item(fj, "The answer is C", fj_rule="letter")
    assert stated["em"] == 1.0 and stated["status"] == "correct"


@pytest.mark.parametrize(("task_args", "rule"), [({}, "exact"), ({"fj_letter": True}, "letter")])
def test_fj_rule_task_argument_is_recorded_and_applied(
    persona: Path, tmp_path: Path, task_args: dict, rule: str
) -> None:
    from m3kit.metrics.text_match import fj_em

    samples, log = _run(persona, tmp_path, "text", task_args={"types": "fj", **task_args})
    assert log.eval.metadata["m3kit_fj_rule"] == rule
    (sample,) = samples.values()
    assert sample.scores[SCORER].value == fj_em(sample.output.completion, ["A"], rule)


def test_oracle_multimodal_sends_images_and_rendered_pages(persona: Path, tmp_path: Path
                                                          ) -> None:
    samples, log = _run(persona, tmp_path, "oracle")
    assert log.eval.metadata["m3kit_regime"] == "oracle"
    glucose = samples["Pat_Tester/0"]
    record = read_record(glucose.metadata)
    # D2 only: its two images and the PDF's two pages, rendered at 144 dpi.
    assert record.usage.images_sent == 4 and record.failure is None
    assert record.usage.prompt_tokens > 0
    assert [Path(f).name for f in record.frames] == [
        "img_2.jpg", "img_3.jpg", "labs.pdf#page=1", "labs.pdf#page=2"]
    shown = glucose.metadata[M3EXAM_KEY]
    assert shown["sessions"] == ["D2"] and shown["pages"] == 2 and shown["images"] == 2
    score = glucose.scores[SCORER]
    assert set(score.metadata) >= {"em", "f1", "bleu1", "kind", "in_total", "question_type"}
    # fm: the prompt names the attached candidates only.
    fm_prompt = json.dumps(samples["Pat_Tester/1"].messages[0].model_dump(mode="json"))
    assert "img_2, img_3" in fm_prompt and "img_1" not in fm_prompt
    # The question whose supporting round (D7:1) is not in the conversation has no oracle
    # context: it is not posed (neither failed nor scored) but listed with the loader's skips,
    # in place of the loader's "question kept" note.
    assert "Pat_Tester/3" not in samples
    question_file = persona / "question.json"
    assert [r for r in log.eval.metadata[SKIPPED_KEY] if "Pat_Tester/3" in r] == [(
        f"{question_file}: record Pat_Tester/3: field 'supporting_facts': question skipped "
        "under the oracle regime: no supporting-fact round is in the conversation, so there is "
        "no session to show (supporting facts: D7:1)")]
    metrics = log.results.scores[0].metrics
    assert metrics["failed"].value == 0
    # EM averages every item, failed ones as 0: its value is the mean of the per-item values.
    ems = [s.scores[SCORER].value for s in samples.values()]
    assert metrics["em"].value == pytest.approx(sum(ems) / len(ems))
    # ``m3kit eval`` prints the harness's results table from the same log: share of full-EM
    # items as accuracy, the failed question counted.
    from m3kit.benchmarks.m3eval.score import result_rows
    from m3kit.report.logs import read_samples

    (overall, *_) = result_rows(read_samples(log))
    assert overall.n == 3 and overall.failed == 0
    assert overall.accuracy == pytest.approx(sum(e == 1.0 for e in ems) / 3)


def test_text_regime_sends_no_pixels(persona: Path, tmp_path: Path) -> None:
    samples, _log = _run(persona, tmp_path, "text")
    record = read_record(samples["Pat_Tester/0"].metadata)
    assert record.usage.images_sent == 0 and record.frames == []
    message = json.dumps(samples["Pat_Tester/0"].messages[0].model_dump(mode="json"))
    assert "labs.pdf#page=1: Glucose 5.4 mmol/L" in message
    assert "a dog on an exam table" in message


def test_judge_model_adds_llm_judge_where_it_applies(persona: Path, tmp_path: Path) -> None:
    # Any inspect model can judge; the offline builtin stands in for Qwen2.5-VL-32B here.
    samples, log = _run(persona, tmp_path, "text",
                        task_args={"types": "mr,fm", "judge_model": "m3kit/builtin"})
    mr = samples["Pat_Tester/0"].scores[SCORER].metadata
    assert mr["llm_judge"] in (0.0, 0.25, 0.5, 0.75, 1.0) and "judge_reply" in mr
    # fm with an image-id gold is never judged.
    assert "llm_judge" not in samples["Pat_Tester/1"].scores[SCORER].metadata
    assert log.results.scores[0].metrics["llm_judge"].value == mr["llm_judge"]


def test_full_regime_budget_and_history(persona: Path, tmp_path: Path) -> None:
    samples, _ = _run(persona, tmp_path, "full", task_args={"types": "fj"})
    assert list(samples) == ["Pat_Tester/2"]
    shown = samples["Pat_Tester/2"].metadata[M3EXAM_KEY]
    # The whole history fits the default budget: both sessions, every attachment.
    assert shown["sessions"] == ["D1", "D2"] and shown["evicted_rounds"] == 0
    assert read_record(samples["Pat_Tester/2"].metadata).usage.images_sent == 5
    # A budget of 300 tokens at 256 per image keeps only what fits (D2:1 alone costs more).
    tight, _ = _run(persona, tmp_path, "full", task_args={"types": "fj", "token_budget": 300})
    assert tight["Pat_Tester/2"].metadata[M3EXAM_KEY]["evicted_rounds"] >= 1


def test_memory_regime_through_the_protocol(persona: Path, tmp_path: Path) -> None:
    samples, log = _run(persona, tmp_path, "memory=context",
                        task_args={"memory_config": {"send_images": False, "ocr": False}})
    assert log.eval.metadata["m3kit_regime"] == "memory=context"
    for sample in samples.values():
        record = read_record(sample.metadata)
        assert record.failure is None and record.memory == "context"
        assert record.usage.prompt_tokens > 0
        assert record.usage.index_build_seconds > 0
        assert "D1:1" in record.usage.retrieved_ids
    # fm candidates in the memory regime: every image of the conversation.
    assert samples["Pat_Tester/1"].metadata[M3EXAM_KEY]["candidates"] == ["img_1", "img_2",
                                                                         "img_3"]


def test_memory_flag_records_the_memory_regime(persona: Path, tmp_path: Path) -> None:
    # ``m3kit eval m3exam --memory context`` with no -T regime: the run's regime is the memory
    # one, and the log's task arguments do not claim an oracle run
    log = run_benchmark_task("m3exam", "m3kit/builtin", memory="context", model_args=NO_OCR,
                             task_args={"data": str(persona), "types": "fj",
                              "memory_config": {"send_images": False, "ocr": False}},
                             log_dir=tmp_path / "logs")
    assert log.status == "success", log.error
    assert log.eval.metadata["m3kit_regime"] == "memory=context"
    assert log.eval.task_args["regime"] is None and log.eval.task_args["memory"] == "context"
    assert read_record(log.samples[0].metadata).memory == "context"


def test_memory_with_a_direct_regime_is_one_line_exit_2(
    persona: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from m3kit.cli.main import main

    logs = tmp_path / "logs"
    code = main(["eval", "m3exam", "--model", "m3kit/builtin", "--memory", "rag",
                 "-T", f"data={persona}", "-T", "regime=full", "--log-dir", str(logs)])
    err = capsys.readouterr().err
    assert code == 2
    assert "regime 'full'" in err and "--memory rag" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not logs.exists() or not any(logs.iterdir())  # refused before any work


def test_conversation_stream_gives_pages_their_text(persona: Path) -> None:
    from m3kit.benchmarks.m3exam.load import load_m3exam

    events = conversation_stream(load_m3exam(persona).conversations["Pat_Tester"])
    pages = [e for e in events if e.kind == "pdf_page"]
    assert [e.text for e in pages] == ["Glucose 5.4 mmol/L", "ALT 40 U/L"]


def test_real_persona_oracle_text(m3exam_persona: Path, tmp_path: Path) -> None:
    samples, _log = _run(m3exam_persona, tmp_path, "text", limit=3)
    assert len(samples) == 3
    for sample in samples.values():
        record = read_record(sample.metadata)
        assert record.failure is None and record.usage.prompt_tokens > 0
        assert sample.scores[SCORER].metadata["question_type"] == "ss"


def test_missing_data_is_one_typed_error(tmp_path: Path) -> None:
    from m3kit.benchmarks.m3exam.task import m3exam
    from m3kit.errors import M3kitError

    with pytest.raises(M3kitError, match="needs its data"):
        m3exam()
    with pytest.raises(M3kitError):
        m3exam(data=str(tmp_path / "nope"))
    with pytest.raises(M3kitError, match="unknown question types"):
        m3exam(data=str(tmp_path), types="zz")


def test_locomo_task_text_regime(tmp_path: Path) -> None:
    conv = {
        "speaker_a": "Ann", "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat named Pixel.",
             "img_url": ["https://example.invalid/cat.jpg"], "blip_caption": "a photo of a cat"},
            {"speaker": "Bo", "dia_id": "D1:2", "text": "Lovely! How old is Pixel?"},
        ],
    }
    qa = [{"question": "What is the name of Ann's cat?", "answer": "Pixel",
           "evidence": ["D1:1"], "category": 1},
          {"question": "Which pet did Ann adopt?", "answer": "a cat", "evidence": ["D1:1"],
           "category": 4}]
    path = tmp_path / "locomo10.json"
    path.write_text(json.dumps([{"sample_id": "conv-1", "conversation": conv, "qa": qa}]))
    log = run_benchmark_task("locomo", "m3kit/builtin", model_args=NO_OCR,
                             task_args={"data": str(path), "types": "1"}, log_dir=tmp_path / "logs")
    assert log.status == "success" and log.eval.metadata["m3kit_regime"] == "oracle-text"
    (sample,) = log.samples
    message = json.dumps(sample.messages[0].model_dump(mode="json"))
    assert "a photo of a cat" in message and "example.invalid" not in message
    assert read_record(sample.metadata).failure is None
    # Multimodal LoCoMo: the web image is never fetched; it is a caption-only attachment, as
    # in the text regime, and no sample fails.
    log = run_benchmark_task("locomo", "m3kit/builtin", model_args=NO_OCR,
                             task_args={"data": str(path), "regime": "oracle", "types": "1"},
                             log_dir=tmp_path / "logs")
    (sample,) = log.samples
    message = json.dumps(sample.messages[0].model_dump(mode="json"))
    assert "a photo of a cat" in message and "example.invalid" not in message
    assert read_record(sample.metadata).failure is None
    assert sample.metadata[M3EXAM_KEY]["images"] == 0


@pytest.mark.parametrize("memory", ["context", "rag", "hierarchical", "proctor"])
def test_locomo_web_and_inline_images_through_every_memory(memory: str, tmp_path: Path
                                                           ) -> None:
    """Every memory with its default configuration (OCR on where it has it) answers every
    LoCoMo question: web images are caption-only, inline images are decoded."""
    from .test_locomo import locomo_with_images

    log = run_benchmark_task("locomo", "m3kit/builtin", memory=memory, model_args=NO_OCR,
                             task_args={"data": str(locomo_with_images(tmp_path))},
                             log_dir=tmp_path / "logs")
    assert log.status == "success", log.error
    assert len(log.samples) == 2
    for sample in log.samples:
        assert read_record(sample.metadata).failure is None, sample.id


class _QueryLog(Memory):
    """Records what each answer call retrieves with; replies with its first visible round."""

    name = "query_log"

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[AnswerRequest] = []

    def config(self) -> dict[str, str]:
        return {}

    async def _build(self, key: str, events: list[MemoryEvent]) -> list[MemoryItem]:
        return [MemoryItem(id=e.id, key=key, event_id=e.id, modality="text", text=e.text,
                           time=e.time) for e in events if e.kind == "round"]

    async def _answer(self, key: str, items: list[MemoryItem],
                      request: AnswerRequest) -> MemoryAnswer:
        self.calls.append(request)
        return MemoryAnswer(output=items[0].text, usage=Usage(retrieved_ids=[items[0].id]))


def test_memory_gets_the_bare_question_as_query(persona: Path, tmp_path: Path) -> None:
    from inspect_ai import Task

    from m3kit.benchmarks.m3exam.load import load_m3exam
    from m3kit.benchmarks.m3exam.regimes import parse_regime
    from m3kit.benchmarks.m3exam.task import m3exam_answer, m3exam_dataset, m3exam_memory_answer

    data = load_m3exam(persona)
    memory = _QueryLog()
    task = Task(dataset=m3exam_dataset(data.questions, parse_regime("memory=query_log")),
                solver=m3exam_memory_answer(data.conversations, memory, cache=False),
                scorer=m3exam_answer())
    log = run_benchmark_task(task, "m3kit/builtin", model_args=NO_OCR, log_dir=tmp_path / "logs")
    assert log.status == "success", log.error
    # retrieval sees the question alone; the model's prompt adds the answering instructions
    # (and, for fm, the candidate file names)
    assert sorted(c.query for c in memory.calls) == sorted(q.text for q in data.questions)
    for call in memory.calls:
        assert call.query in call.prompt and call.prompt != call.query
    fm = next(c for c in memory.calls if c.query.startswith("Which image"))
    assert "img_1" in fm.prompt and "img_1" not in fm.query
    samples = {s.id: s for s in log.samples}
    assert samples["Pat_Tester/0"].metadata[M3EXAM_KEY]["retrieved"] == [
        memory.items("Pat_Tester")[0].id]


def test_a_question_without_supporting_facts_is_skipped_under_oracle_only(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from m3kit.cli.main import main

    folder = tmp_path / "Ida_Nofacts"
    folder.mkdir()
    sessions = [{"session_id": "D1", "date": "2024-01-01", "dialogues": [
        {"round": "D1:1", "user": "My parrot is called Kiwi.", "assistant": "A fine name."}]}]
    questions = [
        {"question": "What is the parrot called?", "answer": ["Kiwi"], "label": "Kiwi",
         "supporting_facts": "D1:1", "type": "ss"},
        {"question": "What colour is Kiwi?", "answer": ["green"], "label": "green",
         "type": "ss"},  # no supporting_facts
    ]
    (folder / "sessions.json").write_text(json.dumps(sessions))
    (folder / "question.json").write_text(json.dumps(questions))
    where = f"{folder / 'question.json'}: record Ida_Nofacts/1: field 'supporting_facts': "

    code = main(["eval", "m3exam", "-T", f"data={folder}", "-T", "regime=oracle", "--model",
                 "m3kit/builtin", "-M", "ocr=false", "--log-dir", str(tmp_path / "oracle")])
    out = capsys.readouterr().out
    assert code == 0, out
    # one question posed and counted; the other listed once, as a skip of the oracle regime
    overall = next(line for line in out.splitlines() if line.split()[:1] == ["all"])
    assert overall.split()[1] == "1"
    assert "skipped 1 record(s) while loading:" in out
    assert (f"  {where}question skipped under the oracle regime: no supporting-fact round is "
            "in the conversation, so there is no session to show (supporting facts: none)"
            ) in out
    assert "(question kept)" not in out

    # the full history poses it: kept, with the loader's note
    samples, log = _run(folder, tmp_path, "full")
    assert sorted(samples) == ["Ida_Nofacts/0", "Ida_Nofacts/1"]
    assert log.eval.metadata[SKIPPED_KEY] == [(
        f"{where}no supporting_facts: oracle regimes and evidence recall have no round for it "
        "(question kept)")]


def test_locomo_types_take_category_numbers() -> None:
    """``-T types=3`` reaches the task as the number 3: a LoCoMo category, not a type error."""
    from m3kit.benchmarks.m3exam.locomo import LOCOMO_TYPES
    from m3kit.benchmarks.m3exam.task import _types, locomo
    from m3kit.harness.taskargs import check_args

    for value in (3, "3", "1,2", [1, "2"]):
        check_args("locomo", locomo, {"types": value}, {})
    assert _types(3, LOCOMO_TYPES) == {"3"} and _types([1, "2"], LOCOMO_TYPES) == {"1", "2"}


def test_rag_and_proctor_get_the_conversation_embedder_unless_one_is_named(
        persona: Path, tmp_path: Path) -> None:
    """The M3Exam and LoCoMo tasks give ``rag`` and ``proctor`` (and memories built on them)
    e5-small when ``memory_config`` names no embedder; the run's card records it. Every other
    memory, and a named embedder, are left as given."""
    from m3kit.benchmarks.m3exam.task import CONVERSATION_EMBEDDER, with_conversation_embedder

    assert CONVERSATION_EMBEDDER == "e5-small"
    for name in ("rag", "rag-mm", "proctor"):
        assert with_conversation_embedder(name, {"k": 3}) == {"embedder": "e5-small", "k": 3}
    assert with_conversation_embedder("rag", {"embedder": "minilm"}) == {"embedder": "minilm"}
    assert with_conversation_embedder("context", None) is None
    assert with_conversation_embedder("hierarchical", None) is None  # not validated with e5
    assert with_conversation_embedder("mem0", {"llm": {}}) == {"llm": {}}  # its own embedder
    assert with_conversation_embedder("no-such-memory", None) is None
    log = run_benchmark_task("m3exam", "m3kit/builtin", memory="rag", model_args=NO_OCR,
                             task_args={"data": str(persona), "types": "fj",
                                        "memory_config": {"ocr": False}},
                             log_dir=tmp_path / "logs")
    assert log.status == "success", log.error
    record = read_record(log.samples[0].metadata)
    assert record.failure is None and record.memory == "rag"
    card = json.dumps(log.eval.metadata)
    assert '"embedder": "e5-small"' in card
