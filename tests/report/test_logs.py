"""One reader of eval logs serves ``m3kit eval``'s summary and ``m3kit report``: on a real log
in which inspect recorded a sample error, both count the same samples the same way."""

from __future__ import annotations

from pathlib import Path

import pytest

from m3kit.benchmarks.m3eval.report import scores_from_runs
from m3kit.benchmarks.m3eval.task import questions_dataset
from m3kit.report.logs import read_run, read_samples
from m3kit.report.summary import summary_table
from m3kit.schema.evallog import BENCHMARK_KEY

from ..conftest import make_question

# q0 and q2 answer A (correct), q1 B (the intrusion), q3 raises inside the solver
REPLIES = {"q0": "The final answer is A", "q1": "The final answer is B",
           "q2": "The final answer is A"}


@pytest.fixture(scope="module")
def errored_log(tmp_path_factory: pytest.TempPathFactory, pattern_video_factory):
    import inspect_ai
    from inspect_ai import Task
    from inspect_ai.model import ModelOutput
    from inspect_ai.solver import Generate, TaskState, solver

    from m3kit.benchmarks.m3eval.scorer import m3eval_answer

    @solver
    def scripted_replies():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            if str(state.sample_id) == "q3":
                raise RuntimeError("the solver broke on q3")
            state.output = ModelOutput.from_content(model="scripted",
                                                    content=REPLIES[str(state.sample_id)])
            return state

        return solve

    base = tmp_path_factory.mktemp("errored")
    video = pattern_video_factory()
    questions = [make_question(i, Path(video), condition="proactive") for i in range(4)]
    task = Task(dataset=questions_dataset(questions, name="errored"), solver=scripted_replies(),
                scorer=m3eval_answer(), metadata={BENCHMARK_KEY: "m3eval"})
    (log,) = inspect_ai.eval(task, model="mockllm/model", log_dir=str(base / "logs"),
                             display="none", fail_on_error=False)
    return log


def test_the_errored_sample_is_read_as_failed_with_inspects_message(errored_log) -> None:
    assert errored_log.status == "success"
    samples = {s.id: s for s in read_samples(errored_log)}
    assert set(samples) == {"q0", "q1", "q2", "q3"}
    broken = samples["q3"]
    assert broken.failed and not broken.excluded and broken.item is None
    assert "the solver broke on q3" in broken.reason
    assert [samples[q].status for q in ("q0", "q1", "q2")] == ["correct", "incorrect",
                                                               "correct"]


def test_eval_summary_and_report_agree(errored_log) -> None:
    # ``m3kit eval``'s table: 4 counted, 2 correct of 4 (the errored one wrong), 1 failed;
    # intrusion: q1 of the 4 questions that offer one
    table = summary_table(errored_log)
    overall = dict(zip(table.columns, table.rows[0], strict=True))
    assert (overall["n"], overall["acc%"], overall["intr%"], overall["failed"],
            overall["excluded"]) == ("4", "50.0", "25.0", "1", "0")
    # ``m3kit report``'s numbers, from the same reader: the same four answers, the same rates
    (card,) = scores_from_runs([read_run(errored_log)]).values()
    assert (card["n_scored"], card["n_failed"], card["n_excluded"], card["n_invalid"]) == (
        4, 1, 0, 0)
    proactive = card["memory_interference"]["proactive"]
    assert (proactive["accuracy"], proactive["intrusion_rate"]) == (50.0, 25.0)


def test_a_log_of_an_unknown_m3kit_task_fails_as_in_m3kit_eval(errored_log,
                                                                tmp_path: Path) -> None:
    from m3kit.benchmarks import UnknownTaskError
    from m3kit.report.build import build_report

    header = errored_log.eval.model_copy(update={"task": "m3kit/mmlu", "metadata": {}})
    foreign = errored_log.model_copy(update={"eval": header})
    for read in (summary_table, read_samples):
        with pytest.raises(UnknownTaskError, match="unknown task 'mmlu'; known tasks: "):
            read(foreign)
    from inspect_ai.log import write_eval_log

    write_eval_log(foreign, str(tmp_path / "mmlu.eval"))
    with pytest.raises(UnknownTaskError, match="unknown task 'mmlu'"):
        build_report([tmp_path / "mmlu.eval"], tmp_path / "out")


def test_a_log_of_another_packages_task_gets_the_generic_row(errored_log) -> None:
    # ``m3kit eval pkg/task`` hands the task to inspect: the same samples under a task m3kit
    # does not own are read without a benchmark, and summarised as one generic row
    from m3kit.report.logs import foreign_task

    header = errored_log.eval.model_copy(update={"task": "other/mmlu", "metadata": {}})
    foreign = errored_log.model_copy(update={"eval": header})
    assert foreign_task(foreign) and not foreign_task(errored_log)
    samples = read_samples(foreign)
    assert [s.item for s in samples] == [None] * 4
    assert "the solver broke on q3" in samples[3].reason
    table = summary_table(foreign)
    assert table.columns[:5] == ["group", "n", "failed", "tok in", "tok out"]
    # 4 samples, q3 errored; the scripted solver called no model: 0 tokens over the 3 others
    assert table.rows[0][:5] == ["all", "4", "1", "0", "0"]
    # then inspect's own metrics, over the 3 samples inspect scored (q3 errored): q0, q2 correct
    # (2/3), q1 the intrusion (1/3)
    metrics = dict(zip(table.columns[5:], table.rows[0][5:], strict=True))
    assert (metrics["m3eval_answer m3kit/accuracy"],
            metrics["m3eval_answer m3kit/intrusion_rate"]) == ("0.667", "0.333")
