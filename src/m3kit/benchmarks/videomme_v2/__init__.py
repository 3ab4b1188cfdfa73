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
    scoring=Ref(f"{_HERE}.score:SCORING"),
    reporting=Ref(f"{_HERE}.report:REPORTING"),
    score_command=ScoreCommand(
        verb="videomme-v2",
        help="Score external Video-MME-v2 predictions exactly as the official evaluation does.",
        data_help="The Video-MME-v2 folder, or its test.parquet / .jsonl / .tsv table.",
        predictions_help="JSONL or TSV with question_id and prediction (raw model text); an "
                         "lmms-eval samples JSONL works too.",
        json_help="Print the leaderboard numbers as JSON.",
        predictions_flags=("--predictions", "-p"),
    ),
    ci_unit="video (its group of 4 questions)",
    headline_format=".2f",
    summary_intervals={"non_lin": "Non-Lin", "avg_acc": "Avg Acc"},
)
