"""Video-MME-v2: grouped questions scored non-linearly (seed 001)."""

from m3kit.benchmarks.declaration import Benchmark, Ref

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
    score_item=Ref(f"{_HERE}.scorer:VideoMMEv2Item"),
    score_predictions=Ref(f"{_HERE}.score:score_predictions"),
    scores_from_log=Ref(f"{_HERE}.score:scores_from_log"),
    summary_rows=Ref(f"{_HERE}.score:summary_rows"),
    report_sections=Ref(f"{_HERE}.report:sections"),
    system_label=Ref(f"{_HERE}.report:run_settings"),
    score_verb="videomme-v2",
    score_command=Ref("m3kit.cli.score_videomme:score_videomme_v2"),
)
