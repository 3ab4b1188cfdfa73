"""M3Eval: video memory probes from cognitive psychology (seed 000), the released benchmark and
m3kit's synthetic suite in its format."""

from pathlib import Path

from m3kit.benchmarks.declaration import Benchmark, Ref, ScoreCommand, ScoreOption

__all__ = ["BENCHMARK"]

_HERE = "m3kit.benchmarks.m3eval"

BENCHMARK = Benchmark(
    name="m3eval",
    title="M3Eval",
    tasks=(
        "m3eval_divided_attention", "m3eval_interference", "m3eval_interference_repeat_target",
        "m3eval_interference_repeat_interferer", "m3eval_interleaved", "m3eval_nback",
        "synth_divided_attention", "synth_interference", "synth_interleaved", "synth_nback",
    ),
    task_module=f"{_HERE}.task",
    components=(Ref(f"{_HERE}.task:direct_answer"), Ref(f"{_HERE}.task:memory_answer"),
                Ref(f"{_HERE}.scorer:m3eval_answer")),
    scorer="m3eval_answer",
    scoring=Ref(f"{_HERE}.score:SCORING"),
    reporting=Ref(f"{_HERE}.report:REPORTING"),
    score_file_keys=frozenset({"divided_attention", "memory_interference", "interleaved",
                               "nback"}),
    score_command=ScoreCommand(
        verb="m3eval",
        help="Score raw model outputs on M3Eval (values in percent, like the paper).",
        data_help="The released M3Eval folder (qa_root/, questions/).",
        predictions_help='JSONL of {"id", "prediction"}.',
        options=(
            ScoreOption("review", ("--review",), type=Path,
                        help="Review file: score only accepted questions."),
            ScoreOption("excluded", ("--exclude",), multiple=True,
                        help="A question id whose video could not be read (repeatable)."),
        ),
    ),
    ci_unit="source video pair (the probe video where no pair is known)",
    # N-back has one question type: its conditions (N, K; swaps; interference order) split it
    stratum="question_type+metadata.condition",
    headline_format=".2f",
    # the report prints intervals as the quickstart's section does: one string per interval
    interval_format=".1f",
    summary_intervals={"accuracy": "acc%", "intrusion_rate": "intr%"},
)
