"""M3Exam: multi-session multimodal conversational memory (seed 002), and LoCoMo through the
same regimes and scorer."""

from m3kit.benchmarks.declaration import (
    SHARED_RANGES,
    ArgRange,
    Benchmark,
    FailurePolicy,
    Ref,
    ScoreCommand,
    ScoreOption,
    Treatment,
)

__all__ = ["BENCHMARK"]

_HERE = "m3kit.benchmarks.m3exam"

BENCHMARK = Benchmark(
    name="m3exam",
    title="M3Exam",
    tasks=("m3exam", "locomo"),
    task_module=f"{_HERE}.task",
    components=(Ref(f"{_HERE}.task:m3exam_context_answer"),
                Ref(f"{_HERE}.task:m3exam_memory_answer"),
                Ref(f"{_HERE}.scorer:m3exam_answer")),
    scorer="m3exam_answer",
    scoring=Ref(f"{_HERE}.score:SCORING"),
    reporting=Ref(f"{_HERE}.report:REPORTING"),
    # the paper's TOTAL is over the items scored: a sample inspect recorded as errored has none
    # (``m3kit eval`` counts it failed beside the table); an item whose media could not be read
    # was scored, 0 (docs/metrics.md, "Confidence intervals", "Which items")
    failures=FailurePolicy(errored=Treatment.LEFT_OUT, unreadable_media=Treatment.COUNTED_WRONG),
    score_command=ScoreCommand(
        verb="m3exam",
        help="Per-type and TOTAL EM / F1 / BLEU-1 / LLM-J and the Overall Score, on the 0-1 "
             "scale.",
        data_help="A persona folder, a folder of them, or locomo10.json.",
        predictions_help='JSONL of {"id", "prediction", "judge"?}.',
        json_help="Print JSON.",
        options=(
            ScoreOption("judge_model", ("--judge-model",),
                        help="inspect model that fills missing judge scores."),
            ScoreOption("judge_model_args", ("-M",), key_values=True,
                        help="Judge model argument key=value (repeatable)."),
            ScoreOption("cache", ("--no-cache",), flag=True, default=True, on=False,
                        help="Do not reuse cached judge replies."),
            ScoreOption("fj_rule", ("--fj-letter",), flag=True, default="exact", on="letter",
                        help="Score fj by the option letter the answer states (m3kit's "
                             "addition; default: the whole answer, as the paper)."),
        ),
    ),
    ci_unit="session of the question's evidence (the question where none is named)",
    headline_format=".4f",
    summary_intervals={"em": "EM", "f1": "F1", "bleu1": "BLEU-1", "llm_judge": "LLM-J",
                       "overall": "Overall"},
    summary_format=".4f",
    ranges={
        **SHARED_RANGES,
        "max_images": ArgRange(lambda v: v >= 0, ">= 0"),
        "max_pdf_pages": ArgRange(lambda v: v >= 0, ">= 0"),
        "dpi": ArgRange(lambda v: v > 0, "> 0"),
        "token_budget": ArgRange(lambda v: v > 0, "> 0"),
        "image_tokens": ArgRange(lambda v: v >= 0, ">= 0"),
    },
)
