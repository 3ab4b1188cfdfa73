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
    score_item=Ref(f"{_HERE}.score:SuperMemoryItem"),
    score_predictions=Ref(f"{_HERE}.score:score_predictions"),
    scores_from_log=Ref(f"{_HERE}.score:scores_from_log"),
    summary_rows=Ref(f"{_HERE}.score:summary_rows"),
    report_sections=Ref(f"{_HERE}.report:sections"),
    system_label=Ref(f"{_HERE}.report:system_label"),
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
    score_text=Ref(f"{_HERE}.score:score_text"),
    score_file_keys=frozenset({"qa_mrr", "ans_f1", "abstain_f1"}),
    ranges={**SHARED_RANGES, "memory_fps": FPS_RANGE,
            "transcript_tokens": ArgRange(lambda v: v >= 0, ">= 0")},
    headline=Ref(f"{_HERE}.score:headline"),
    cluster_of=Ref(f"{_HERE}.score:cluster_of"),
    item_correct=Ref(f"{_HERE}.score:item_correct"),
    items_from_log=Ref(f"{_HERE}.score:items_from_log"),
    items_from_predictions=Ref(f"{_HERE}.score:items_from_predictions"),
    ci_unit="person",
    headline_format=".2f",
    # the report prints intervals as the quickstart's section does: one string per interval
    interval_format=".1f",
    summary_intervals={"ans_f1": "Ans-F1", "qa_acc": "Acc", "qa_mrr": "MRR"},
    data_files=Ref(f"{_HERE}.load:data_files"),
    data_media=Ref(f"{_HERE}.load:data_media"),
    scoring_rules=Ref(f"{_HERE}.score:scoring_rules"),
)
