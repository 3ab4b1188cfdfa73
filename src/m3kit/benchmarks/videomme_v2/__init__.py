"""Video-MME-v2: grouped questions scored non-linearly (seed 001)."""

from m3kit.benchmarks.declaration import Benchmark, Ref, ScoreCommand

__all__ = ["BENCHMARK"]

_HERE = "m3kit.benchmarks.videomme_v2"

BENCHMARK = Benchmark(
    name="videomme_v2",
    title="Video-MME-v2",
    tasks=("videomme_v2",),
    task_module=f"{_HERE}.task",
    components=(Ref(f"{_HERE}.task:videomme_v2_solver"),
                Ref(f"{_HERE}.task:videomme_v2_memory_solver"),
                Ref(f"{_HERE}.scorer:videomme_v2_answer")),
    scorer="videomme_v2_answer",
    score_item=Ref(f"{_HERE}.score:VideoMMEv2Item"),
    score_predictions=Ref(f"{_HERE}.score:score_predictions"),
    scores_from_log=Ref(f"{_HERE}.score:scores_from_log"),
    summary_rows=Ref(f"{_HERE}.score:summary_rows"),
    report_sections=Ref(f"{_HERE}.report:sections"),
    system_label=Ref(f"{_HERE}.report:system_label"),
    score_command=ScoreCommand(
        verb="videomme-v2",
        help="Score external Video-MME-v2 predictions exactly as the official evaluation does.",
        data_help="The Video-MME-v2 folder, or its test.parquet / .jsonl / .tsv table.",
        predictions_help="JSONL or TSV with question_id and prediction (raw model text); an "
                         "lmms-eval samples JSONL works too.",
        json_help="Print the leaderboard numbers as JSON.",
        predictions_flags=("--predictions", "-p"),
    ),
    score_text=Ref(f"{_HERE}.score:score_text"),
    headline=Ref(f"{_HERE}.score:headline"),
    cluster_of=Ref(f"{_HERE}.score:cluster_of"),
    item_correct=Ref(f"{_HERE}.score:item_correct"),
    items_from_log=Ref(f"{_HERE}.score:items_from_log"),
    items_from_predictions=Ref(f"{_HERE}.score:items_from_predictions"),
    ci_unit="video (its group of 4 questions)",
    headline_format=".2f",
    summary_intervals={"non_lin": "Non-Lin", "avg_acc": "Avg Acc"},
    data_files=Ref(f"{_HERE}.load:data_files"),
    data_media=Ref(f"{_HERE}.load:data_media"),
    scoring_rules=Ref(f"{_HERE}.score:scoring_rules"),
)
