"""``m3kit.report.compare`` on real inputs with hand-computed differences: two eval logs of
scripted replies to M3Eval questions (real inspect runs), two Video-MME-v2 predictions files
on the released layout, two predictions files on a real M3Exam persona; and the refusals."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from m3kit.benchmarks.m3eval.task import questions_dataset
from m3kit.report.compare import (
    CompareError,
    RunItems,
    compare_runs,
    run_from_logs,
    run_from_predictions,
    significant,
)
from m3kit.schema.evallog import BENCHMARK_KEY

from ..benchmarks.videomme_v2.conftest import gold_letter, rows, write_table
from ..conftest import make_question

# Six proactive-interference questions, two per probe video (v0: q0 q1, v1: q2 q3, v2: q4 q5).
# Run A answers q2 with the intrusion (B) and q4 with the irrelevant distractor (C), the rest
# right; run B answers all six right.
REPLIES_A = {"q0": "A", "q1": "A", "q2": "B", "q3": "A", "q4": "C", "q5": "A"}
REPLIES_B = dict.fromkeys(REPLIES_A, "A")


def _scripted_log(folder: Path, replies: dict[str, str]) -> Path:
    import inspect_ai
    from inspect_ai import Task
    from inspect_ai.model import ModelOutput
    from inspect_ai.solver import Generate, TaskState, solver

    from m3kit.benchmarks.m3eval.scorer import m3eval_answer

    @solver
    def scripted_replies():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            reply = f"The final answer is {replies[str(state.sample_id)]}"
            state.output = ModelOutput.from_content(model="scripted", content=reply)
            return state

        return solve

    questions = [make_question(i, Path(f"v{i // 2}.mp4"), condition="proactive")
                 for i in range(6) if f"q{i}" in replies]
    task = Task(dataset=questions_dataset(questions, name="scripted"),
                solver=scripted_replies(), scorer=m3eval_answer(),
                metadata={BENCHMARK_KEY: "m3eval"})
    inspect_ai.eval(task, model="mockllm/model", log_dir=str(folder), display="none")
    return folder


@pytest.fixture(scope="module")
def scripted_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("scripted_runs")
    return {
        "a": _scripted_log(base / "a", REPLIES_A),
        "b": _scripted_log(base / "b", REPLIES_B),
        # the first four questions only, and the first only
        "b4": _scripted_log(base / "b4", {q: REPLIES_B[q] for q in ("q0", "q1", "q2", "q3")}),
        "b1": _scripted_log(base / "b1", {"q0": "A"}),
    }


def _expected_interval(unit_diffs: list[list[float]], resamples: int, seed: int,
                       level: float = 0.95) -> tuple[float, float, float]:
    """The percentile interval and p-value of a mean difference over items, from the draws
    ``m3kit.metrics.bootstrap`` documents (``default_rng(seed).integers``)."""
    draws = np.random.default_rng(seed).integers(0, len(unit_diffs),
                                                 size=(resamples, len(unit_diffs)))
    diffs = np.array([np.mean([d for u in row for d in unit_diffs[u]]) for row in draws])
    lo, hi = np.quantile(diffs, [(1 - level) / 2, (1 + level) / 2])
    p = min(1.0, 2 * min(float(np.mean(diffs <= 0)), float(np.mean(diffs >= 0))))
    return float(lo), float(hi), p


def test_two_logs_hand_computed(scripted_runs: dict[str, Path]) -> None:
    a, b = run_from_logs(scripted_runs["a"]), run_from_logs(scripted_runs["b"])
    assert (a.benchmark, a.label, sorted(a.items)) == ("m3eval", "mockllm/model",
                                                       [f"q{i}" for i in range(6)])
    result = compare_runs(a, b, resamples=500, seed=3)
    assert (result.n_shared, result.only_a, result.only_b, result.n_units) == (6, [], [], 3)
    accuracy = result.numbers["accuracy"]
    # A: 4 of 6 right, B: 6 of 6
    assert accuracy.a == pytest.approx(400 / 6) and accuracy.b == 100.0
    assert accuracy.diff == pytest.approx(200 / 6)
    # per probe video, B - A in points per question: v0 (0, 0), v1 (100, 0), v2 (100, 0)
    lo, hi, _ = _expected_interval([[0, 0], [100, 0], [100, 0]], 500, 3)
    assert (accuracy.lo, accuracy.hi) == pytest.approx((lo, hi))
    # 3 units, under MIN_UNITS: the interval is shown, but no p-value and no *
    assert (accuracy.n_units, accuracy.p_value, significant(accuracy)) == (3, None, False)
    # the intrusion: A chose it once (q2) of 6 offers, B never
    intrusion = result.numbers["intrusion_rate"]
    assert (intrusion.a, intrusion.b) == pytest.approx((100 / 6, 0.0))
    assert intrusion.diff == pytest.approx(-100 / 6)
    assert result.numbers["proactive_accuracy"].diff == pytest.approx(200 / 6)
    # McNemar: 0 questions right in A only, 2 (q2, q4) in B only: p = 2 * (1/2)**2
    assert result.mcnemar is not None
    assert (result.mcnemar.n, result.mcnemar.b, result.mcnemar.c) == (6, 0, 2)
    assert result.mcnemar.p_value == 0.5
    assert (result.unit, result.resamples, result.level, result.seed) == (
        "source video pair (the probe video where no pair is known)", 500, 0.95, 3)


def test_items_of_one_run_only_are_listed_and_left_out(scripted_runs: dict[str, Path]) -> None:
    a, b4 = run_from_logs(scripted_runs["a"]), run_from_logs(scripted_runs["b4"])
    result = compare_runs(a, b4, resamples=200)
    # 4 of A's 6 questions shared (67 %, over MIN_SHARED): q4 and q5 left out
    assert (result.n_shared, result.only_a, result.only_b) == (4, ["q4", "q5"], [])
    # on q0-q3: A 3 of 4 right (q2 wrong), B 4 of 4
    assert result.numbers["accuracy"].a == 75.0 and result.numbers["accuracy"].b == 100.0
    assert result.mcnemar is not None and (result.mcnemar.b, result.mcnemar.c) == (0, 1)


def test_too_few_shared_questions_refuse(scripted_runs: dict[str, Path]) -> None:
    a, b1 = run_from_logs(scripted_runs["a"]), run_from_logs(scripted_runs["b1"])
    with pytest.raises(CompareError, match=r"share 1 of 6 questions .* under 50%: they ran "
                                           r"different question sets"):
        compare_runs(a, b1)
    empty = b1.model_copy(update={"items": {"x": b1.items["q0"]}})
    with pytest.raises(CompareError, match="the runs share no question"):
        compare_runs(a, empty)


def test_runs_of_two_benchmarks_refuse(scripted_runs: dict[str, Path]) -> None:
    a = run_from_logs(scripted_runs["a"])
    other = RunItems(benchmark="videomme_v2", label="x", source="x.jsonl", items=a.items)
    with pytest.raises(CompareError, match="run A is m3eval, run B is videomme_v2"):
        compare_runs(a, other)


def test_a_folder_of_two_systems_is_refused(scripted_runs: dict[str, Path],
                                            tmp_path: Path) -> None:
    from inspect_ai.log import read_eval_log, write_eval_log

    (log,) = [read_eval_log(str(p)) for p in scripted_runs["a"].glob("*.eval")]
    other = log.model_copy(update={"eval": log.eval.model_copy(update={"model": "other/m"})})
    write_eval_log(log, str(tmp_path / "one.eval"))
    write_eval_log(other, str(tmp_path / "two.eval"))
    with pytest.raises(CompareError, match=r"holds runs of 2 systems \(mockllm/model, "
                                           r"other/m\): give one system's logs"):
        run_from_logs(tmp_path)


# -- Video-MME-v2: two predictions files on the released layout -------------------------------


def _videomme_predictions(path: Path, wrong: set[str]) -> Path:
    lines = []
    for row in rows():
        qid = row["question_id"]
        gold = gold_letter(row["video_id"], int(qid.rsplit("-", 1)[1]))
        lines.append(json.dumps({"question_id": qid,
                                 "prediction": ("H" if gold != "H" else "G") if qid in wrong
                                 else gold}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_videomme_v2_predictions_hand_computed(tmp_path: Path) -> None:
    from m3kit.benchmarks import benchmark_named

    benchmark = benchmark_named("videomme_v2")
    assert benchmark is not None
    data = write_table(tmp_path / "test.jsonl", rows())
    # A misses the last question of groups 001 (relevance), 002 (chain), 003 ([1, [2, 3], 4]);
    # B answers all 16
    a = run_from_predictions(benchmark, data, _videomme_predictions(
        tmp_path / "a.jsonl", {"001-4", "002-4", "003-4"}))
    b = run_from_predictions(benchmark, data, _videomme_predictions(tmp_path / "b.jsonl", set()))
    result = compare_runs(a, b, resamples=400, seed=0)
    assert (result.a, result.b, result.n_shared, result.n_units) == ("a", "b", 16, 4)
    # A's group scores: relevance 3 right 100*9/16 = 56.25; chain L=3 56.25; [1, [2, 3], 4] L=3
    # 700/12; [[1, 2], 3, 4] all right 100. B: 100 each.
    group_diffs = [100 - 56.25, 100 - 56.25, 100 - 700 / 12, 0.0]
    non_lin = result.numbers["non_lin"]
    assert non_lin.a == pytest.approx((56.25 + 56.25 + 700 / 12 + 100) / 4)
    assert non_lin.b == 100.0 and non_lin.diff == pytest.approx(sum(group_diffs) / 4)
    lo, hi, _ = _expected_interval([[d] for d in group_diffs], 400, 0)
    assert (non_lin.lo, non_lin.hi) == pytest.approx((lo, hi))
    # the interval excludes 0, but 4 groups are under MIN_UNITS: no p-value, no *
    assert lo > 0
    assert (non_lin.n_units, non_lin.p_value, significant(non_lin)) == (4, None, False)
    avg = result.numbers["avg_acc"]
    assert (avg.a, avg.b, avg.diff) == pytest.approx((1300 / 16, 100.0, 300 / 16))
    # level 3: groups 003 and 004
    assert result.numbers["level_3"].a == pytest.approx((700 / 12 + 100) / 2)
    # 3 questions right in B only: McNemar p = 2 * (1/2)**3
    assert result.mcnemar is not None
    assert (result.mcnemar.n, result.mcnemar.b, result.mcnemar.c) == (16, 0, 3)
    assert result.mcnemar.p_value == 0.25
    # both scored on the same data by the same rules: their cards differ in nothing but the file
    assert result.card_differences == []


# -- M3Exam: two predictions files on a real persona ------------------------------------------


def test_m3exam_predictions_hand_computed(m3exam_persona: Path, tmp_path: Path) -> None:
    from m3kit.benchmarks import benchmark_named
    from m3kit.benchmarks.m3exam.load import load_m3exam

    benchmark = benchmark_named("m3exam")
    assert benchmark is not None
    questions = load_m3exam(m3exam_persona).questions
    assert len(questions) == 358
    wrong = {q.id for q in questions[:3]}  # A answers these three wrong (EM 0)
    left = {q.id for q in questions[-2:]}  # B gives no prediction for these two

    def write(path: Path, records: list[dict[str, str]]) -> Path:
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        return path

    a = run_from_predictions(benchmark, m3exam_persona, write(tmp_path / "a.jsonl", [
        {"id": q.id, "prediction": "zzqx" if q.id in wrong else q.answer} for q in questions]))
    b = run_from_predictions(benchmark, m3exam_persona, write(tmp_path / "b.jsonl", [
        {"id": q.id, "prediction": q.answer} for q in questions if q.id not in left]))
    result = compare_runs(a, b, resamples=200)
    # a question without a prediction is counted wrong (one rule across benchmarks): B's two
    # are items, wrong, so both runs hold all 358
    assert (result.n_shared, result.only_a, result.only_b) == (358, [], [])
    em = result.numbers["em"]
    assert (em.a, em.b, em.diff) == pytest.approx((355 / 358, 356 / 358, 1 / 358))
    assert result.mcnemar is not None
    # only A right: B's two missing; only B right: A's three wrong. p = 2 P(Bin(5, 1/2) <= 2) = 1
    assert (result.mcnemar.n, result.mcnemar.b, result.mcnemar.c) == (358, 2, 3)
    assert result.mcnemar.p_value == 1.0
    # no judge scores in either file: LLM-J and Overall are undefined
    assert result.numbers["llm_judge"].diff is None and result.numbers["overall"].diff is None
    assert result.unit.startswith("session")


def test_m3exam_score_options_reach_the_items(m3exam_persona: Path, tmp_path: Path) -> None:
    from m3kit.benchmarks.m3exam.load import load_m3exam
    from m3kit.report.compare import compare_inputs

    questions = load_m3exam(m3exam_persona).questions
    judgements = [q for q in questions if q.question_type == "fj"]
    assert judgements
    # A states each judgement's letter in a sentence; B gives the letter alone
    a = tmp_path / "a.jsonl"
    a.write_text("".join(json.dumps({"id": q.id, "prediction": f"The answer is {q.answer}"
                                     if q.question_type == "fj" else q.answer}) + "\n"
                         for q in questions), encoding="utf-8")
    b = tmp_path / "b.jsonl"
    b.write_text("".join(json.dumps({"id": q.id, "prediction": q.answer}) + "\n"
                         for q in questions), encoding="utf-8")

    def em_of_a(**options: str) -> float | None:
        (result,) = compare_inputs([], score="m3exam", data=m3exam_persona,
                                   predictions=[a, b], score_options=options,
                                   resamples=50).comparisons
        return result.numbers["em"].a

    # the paper's rule scores the whole answer: A's judgements score 0; by the letter, 1
    assert em_of_a() == pytest.approx(1 - len(judgements) / len(questions))
    assert em_of_a(fj_rule="letter") == 1.0
    with pytest.raises(CompareError, match=r"m3kit score m3exam has no option 'rule' \(its "
                                           r"options: judge_model, judge_model_args, cache, "
                                           r"fj_rule\)"):
        em_of_a(rule="letter")


# -- pairing the systems of two sides ---------------------------------------------------------


def _labelled(label: str, side: str) -> RunItems:
    return RunItems(benchmark="m3eval", label=label, source=side, items={})


def test_pair_systems() -> None:
    from m3kit.report.compare import pair_systems

    one_a, one_b = _labelled("x", "A"), _labelled("y", "B")
    # one system a side: that pair, whatever the labels
    assert pair_systems([one_a], [one_b]) == ([(one_a, one_b)], [], [])
    a = [_labelled("m + rag", "A"), _labelled("m", "A"), _labelled("m (blind)", "A")]
    b = [_labelled("m", "B"), _labelled("m + rag", "B"), _labelled("n", "B")]
    pairs, only_a, only_b = pair_systems(a, b)
    # pairs by label, in label order; the others listed, left out
    assert [(x.label, x.source, y.label, y.source) for x, y in pairs] == [
        ("m", "A", "m", "B"), ("m + rag", "A", "m + rag", "B")]
    assert (only_a, only_b) == (["m (blind)"], ["n"])
    # --system: that label on each side holding several; a single run as it is
    assert pair_systems(a, b, "m + rag") == ([(a[0], b[1])], [], [])
    assert pair_systems(a, [one_b], "m") == ([(a[1], one_b)], [], [])
    with pytest.raises(CompareError, match=r"run B holds no system 'm \(blind\)' \(its "
                                           r"systems: m, m \+ rag, n\)"):
        pair_systems(a, b, "m (blind)")
    with pytest.raises(CompareError, match=r"the runs share no system \(A: m, m \(blind\), "
                                           r"m \+ rag; B: p, q\): give --system LABEL"):
        pair_systems(a, [_labelled("q", "B"), _labelled("p", "B")])


# -- few units: no p-value, no *, the unit count shown ----------------------------------------


def _interference_run(label: str, correct: dict[str, bool], source_of: dict[str, str],
                      condition: dict[str, str]) -> RunItems:
    from m3kit.benchmarks.m3eval.item import M3EvalItem

    return RunItems(benchmark="m3eval", label=label, source=label, items={
        qid: M3EvalItem(id=qid, status="correct" if right else "incorrect", letter="A",
                        groups={"paradigm": "interference", "condition": condition[qid]},
                        offers_intrusion=False, video=f"probe-{qid}",
                        source=source_of[qid])
        for qid, right in correct.items()})


def test_a_difference_on_one_unit_is_never_significant() -> None:
    # The reviewer's case: proactive accuracy 100 -> 50 on the two questions of ONE source
    # pair; every resample draws that pair, so the bootstrap would say [-50, -50], p < 0.0005.
    from m3kit.report.compare import comparison_table

    ids = ["q0", "q1"]
    source = dict.fromkeys(ids, "pair:p0")
    condition = dict.fromkeys(ids, "proactive")
    a = _interference_run("a", {"q0": True, "q1": True}, source, condition)
    b = _interference_run("b", {"q0": True, "q1": False}, source, condition)
    result = compare_runs(a, b)
    proactive = result.numbers["proactive_accuracy"]
    assert (proactive.diff, proactive.lo, proactive.hi, proactive.p_value,
            proactive.n_units) == (-50.0, None, None, None, 1)
    rows = {row[0]: row for row in comparison_table(result).rows}
    assert rows["proactive_accuracy"][3:] == ["-50.00", "—", "—", "1"]


def test_a_difference_on_ten_units_gets_its_p_and_mark() -> None:
    # Ten source pairs, one question each: A wrong on all, B right on all. Every resample's
    # difference is +100: interval [+100, +100], no resample crosses 0 (p < 1/2000), marked *.
    from m3kit.report.compare import comparison_table

    ids = [f"q{i}" for i in range(10)]
    source = {qid: f"pair:p{i}" for i, qid in enumerate(ids)}
    condition = dict.fromkeys(ids, "proactive")
    a = _interference_run("a", dict.fromkeys(ids, False), source, condition)
    b = _interference_run("b", dict.fromkeys(ids, True), source, condition)
    result = compare_runs(a, b)
    rows = {row[0]: row for row in comparison_table(result).rows}
    assert rows["accuracy"][1:] == ["0.00", "100.00", "+100.00*", "[+100.00, +100.00]",
                                    "<0.0005", "10"]
    # the same runs but a pair fewer: 9 units, no p, no *
    nine = compare_runs(_interference_run("a", dict.fromkeys(ids[:9], False), source, condition),
                        _interference_run("b", dict.fromkeys(ids[:9], True), source, condition))
    rows = {row[0]: row for row in comparison_table(nine).rows}
    assert rows["accuracy"][3:] == ["+100.00", "[+100.00, +100.00]", "—", "9"]


def test_proactive_and_retroactive_probes_of_one_pair_are_one_unit() -> None:
    # Two pairs, each with a proactive and a retroactive probe: 2 units, not 4; the delta
    # (proactive - retroactive) is defined within each pair, so it rests on both.
    ids = ["p0-pro", "p0-retro", "p1-pro", "p1-retro"]
    source = {qid: f"pair:{qid[:2]}" for qid in ids}
    condition = {qid: "proactive" if qid.endswith("pro") else "retroactive" for qid in ids}
    a = _interference_run("a", dict.fromkeys(ids, True), source, condition)
    b = _interference_run("b", {"p0-pro": False, "p0-retro": True, "p1-pro": True,
                                "p1-retro": True}, source, condition)
    result = compare_runs(a, b, resamples=200)
    assert result.n_units == 2
    delta = result.numbers["delta_accuracy"]
    # A: 100 - 100 = 0; B: 50 - 100 = -50. Per pair B's delta is -100 (p0) and 0 (p1).
    assert (delta.a, delta.b, delta.diff, delta.n_units) == (0.0, -50.0, -50.0, 2)
    assert delta.lo is not None and delta.p_value is None
