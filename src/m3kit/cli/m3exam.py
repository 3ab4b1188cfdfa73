"""``m3kit m3exam synthesize``: build an M3Exam persona folder with any backend.

Thin: options and progress bars here, the pipeline in
``m3kit.benchmarks.m3exam.construct.synthesize``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from m3kit.cli.options import CallAttemptsOption, CallTimeoutOption, QuietOption
from m3kit.models.backend import DEFAULT_CALL_ATTEMPTS, DEFAULT_CALL_TIMEOUT

__all__ = ["app", "synthesize_command"]

app = typer.Typer(help="M3Exam: conversational multimodal memory.", no_args_is_help=True)


@app.command("synthesize")
def synthesize_command(
    spec: Annotated[Path, typer.Option("--spec", help="Persona spec (JSON/YAML): name, persona, "
                                       "core_event, start_date[, n_core_events, "
                                       "n_distractor_events].")],
    model: Annotated[str, typer.Option("--model", "-m", help="Any inspect model, e.g. "
                                       "openai-api/vllm/Qwen/Qwen2.5-VL-7B-Instruct.")],
    out: Annotated[Path, typer.Option("--out", help="Output root; the persona folder is "
                                      "OUT/<name>. A rerun resumes.")] = Path("m3exam-synth"),
    images: Annotated[Path | None, typer.Option("--images", help="Image pool folder "
                                                "(descriptions.json optional).")] = None,
    documents: Annotated[Path | None, typer.Option("--documents", help="Document pool folder of "
                                                   "PDFs (descriptions.json optional); a "
                                                   "document event attaches its PDF instead "
                                                   "of images.")] = None,
    model_arg: Annotated[list[str] | None, typer.Option("-M", "--model-arg",
                                                        help="Model option key=value.")] = None,
    seed: Annotated[int, typer.Option(help="Seed for sampling and generation.")] = 0,
    per_type: Annotated[int, typer.Option(help="Questions per type (ss ms tr mr fm th ii "
                                          "fj).")] = 4,
    rounds_per_event: Annotated[int, typer.Option(help="Rounds per timeline event.")] = 2,
    images_per_event: Annotated[int, typer.Option(help="Pool images per event.")] = 2,
    documents_per_event: Annotated[int, typer.Option(help="Pool PDFs per event at most.")] = 1,
    document_pages: Annotated[int, typer.Option(help="Pages of a PDF a round shows.")] = 4,
    page_images: Annotated[bool, typer.Option("--page-images/--no-page-images",
                                              help="Also send rendered PDF pages to the "
                                              "model (a vision model).")] = True,
    max_rounds_per_session: Annotated[int, typer.Option(help="Session size cap.")] = 10,
    retries: Annotated[int, typer.Option(help="Retries of malformed output.")] = 2,
    call_attempts: CallAttemptsOption = DEFAULT_CALL_ATTEMPTS,
    call_timeout: CallTimeoutOption = DEFAULT_CALL_TIMEOUT,
    quiet: QuietOption = False,
) -> None:
    """Persona + core event → timeline → dialogue → validated question bank."""
    from m3kit.benchmarks.m3exam.construct import InspectBackend, SynthesisConfig, synthesize
    from m3kit.benchmarks.m3exam.construct.pipeline import MAX_REPLY_TOKENS, read_spec
    from m3kit.benchmarks.m3exam.load import QUESTION_TYPES
    from m3kit.cli.options import parse_key_values

    persona = read_spec(spec)
    config = SynthesisConfig(
        seed=seed, images_per_event=images_per_event, rounds_per_event=rounds_per_event,
        documents_per_event=documents_per_event, max_document_pages=document_pages,
        document_page_images=page_images,
        max_rounds_per_session=max_rounds_per_session, retries=retries,
        questions={t: per_type for t in QUESTION_TYPES},
    )
    console = Console(stderr=True)

    def notify(text: str) -> None:
        console.print(text, markup=False, highlight=False, soft_wrap=True)

    backend = InspectBackend(model, seed=seed, max_tokens=MAX_REPLY_TOKENS,
                             model_args=parse_key_values(model_arg or [], "-M"),
                             max_attempts=call_attempts, attempt_timeout=call_timeout,
                             notify=notify)
    tasks: dict[str, TaskID] = {}
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=False,
                  disable=quiet) as bars:
        def progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bars.add_task(stage, total=total)
            bars.update(tasks[stage], completed=done, total=total)

        try:
            result = synthesize(persona, backend, out, config=config, image_pool=images,
                                document_pool=documents, progress=progress)
        finally:
            backend.close()
            # what the calls came to, also when a failing server stopped the run
            notify(backend.call_count.describe())
    typer.echo(f"wrote {result.out_dir}: {result.events} events, {result.sessions} sessions, "
               f"{result.rounds} rounds, {result.images} images, {result.documents} documents, "
               f"{sum(result.questions.values())} questions "
               f"({', '.join(f'{t} {n}' for t, n in result.questions.items())}); "
               f"{result.qc_edits} quality-control edits, {result.rejected_questions} "
               f"questions rejected (see {result.out_dir / '_synthesis'})")
    for reason in result.skipped_documents:
        typer.echo(f"skipped document: {reason}", err=True)
