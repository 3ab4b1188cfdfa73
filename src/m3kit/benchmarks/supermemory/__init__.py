"""SuperMemory-VQA: egocentric multi-day memory with ranked options and abstention (seed 003)."""

from m3kit.benchmarks.declaration import (
    FPS_RANGE,
    SHARED_RANGES,
    ArgRange,
    Benchmark,
    Ref,
    ScoreCommand,
    ScoreOption,
)

__all__ = ["BENCHMARK"]

_HERE = "m3kit.benchmarks.supermemory"

BENCHMARK = Benchmark(
    name="supermemory",
    title="SuperMemory-VQA",
    tasks=("supermemory",),
    task_module=f"{_HERE}.task",
    components=(Ref(f"{_HERE}.task:supermemory_solver"),
                Ref(f"{_HERE}.task:supermemory_memory_solver"),
                Ref(f"{_HERE}.scorer:supermemory_answer")),
    scorer="supermemory_answer",
    scoring=Ref(f"{_HERE}.score:SCORING"),
    reporting=Ref(f"{_HERE}.report:REPORTING"),
    score_command=ScoreCommand(
        verb="supermemory",
        help="Score SuperMemory-VQA predictions: Ans-F1, QA-Acc, QA-MRR and the breakdowns.",
        data_help="The SuperMemory-VQA folder (holding data/json/all_qa.json) or all_qa.json.",
        predictions_help="JSONL with question_id and ranking (letters A-D or 0-based indices, "
                         "best first, possibly partial) or prediction (the raw reply).",
        json_help="Print every number as JSON (never rounded).",
        predictions_flags=("--predictions", "-p"),
        options=(
            ScoreOption("vague_weight", ("--vague-weight",), type=float, default=0.5,
                        help="Credit of a vague option in vague_credit_acc (default 0.5; the "
                             "paper's Table 5 does not state its weight)."),
            ScoreOption("stats", ("--stats",), flag=True, default=False,
                        help="Also print the data set's statistics (appendix E) beside the "
                             "score; without predictions: m3kit supermemory stats."),
        ),
    ),
    score_file_keys=frozenset({"qa_mrr", "ans_f1", "abstain_f1"}),
    ranges={**SHARED_RANGES, "memory_fps": FPS_RANGE,
            "transcript_tokens": ArgRange(lambda v: v >= 0, ">= 0")},
    ci_unit="person",
    headline_format=".2f",
    # the report prints intervals as the quickstart's section does: one string per interval
    interval_format=".1f",
    summary_intervals={"ans_f1": "Ans-F1", "qa_acc": "Acc", "qa_mrr": "MRR"},
)
