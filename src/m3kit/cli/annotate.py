"""``m3kit supermemory annotate``: SuperMemory-VQA's two-stage annotation pipeline on your own
recordings (seed 003 §3.4). Thin: options and progress here, the pipeline in
``m3kit.benchmarks.supermemory.construct``.

    m3kit supermemory annotate captions VIDEOS... --out ROOT [--model M]
        stage 1: dense sequential captions of each session, a person registry
    m3kit supermemory annotate questions ROOT --model M
        stage 2: the Super Ledger, planned, verified and enhanced QA pairs, data/json/all_qa.json
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from m3kit.cli.options import (
    CallAttemptsOption,
    CallTimeoutOption,
    QuietOption,
    StructuredOption,
    at_least,
)
from m3kit.models.backend import (
    DEFAULT_CALL_ATTEMPTS,
    DEFAULT_CALL_TIMEOUT,
    STRUCTURED_OUTPUTS,
    StructuredOutput,
)

app = typer.Typer(help="Turn recordings into a SuperMemory-VQA benchmark: captions, then "
                       "questions.", no_args_is_help=True)


_CAPTION_STAGES = {"chunks": "chunks captioned"}


@app.command("captions")
def captions(
    videos: Annotated[list[Path], typer.Argument(
        help="Video files, folders of videos, or folders in the released layout "
             "(data/video/Person_<n>/..., transcripts beside).")],
    out: Annotated[Path, typer.Option("--out", help="The benchmark root to build (recordings "
                                                    "are linked into its data/ layout).")],
    model: Annotated[str | None, typer.Option(
        "--model", help="An inspect vision-language model (default: the offline surrogate "
                        "captioner: OCR, transcript and detector text, no model).")] = None,
    model_arg: Annotated[list[str] | None, typer.Option(
        "-M", "--model-arg", help="Model argument key=value (repeatable).")] = None,
    person: Annotated[int | None, typer.Option(
        "--person", callback=at_least("--person", 1),
        help="The person number of video files outside the released layout.")] = None,
    starts: Annotated[Path | None, typer.Option(
        "--starts", help="JSON {video_id: unix seconds}: each session's start (else the "
                         "transcript's metadata, or a video's creation_time tag).")] = None,
    chunk_seconds: Annotated[float, typer.Option(
        "--chunk-seconds", callback=at_least("--chunk-seconds", 1),
        help="Chunk length.")] = 120.0,
    merge_below: Annotated[float, typer.Option(
        "--merge-below", callback=at_least("--merge-below", 0),
        help="A last chunk shorter than this joins the one before.")] = 90.0,
    context: Annotated[int, typer.Option(
        "--context", callback=at_least("--context", 0),
        help="Previous chunks' captions in each prompt.")] = 30,
    frames: Annotated[int, typer.Option(
        "--frames", callback=at_least("--frames", 1),
        help="Frames per chunk sent to the model.")] = 8,
    attempts: Annotated[int, typer.Option(
        "--attempts", callback=at_least("--attempts", 1),
        help="Replies per chunk before it is skipped.")] = 3,
    transcribe: Annotated[bool, typer.Option(
        "--transcribe/--no-transcribe", help="Transcribe a session without a transcript "
                                             "(faster-whisper tiny.en, offline).")] = True,
    call_attempts: CallAttemptsOption = DEFAULT_CALL_ATTEMPTS,
    call_timeout: CallTimeoutOption = DEFAULT_CALL_TIMEOUT,
    structured: StructuredOption = "off",
    quiet: QuietOption = False,
) -> None:
    """Stage 1: dense sequential captions of each person's sessions, and a person registry.

    Writes OUT/annotations/captions/person_<n>/<video_id>_caption_narrations.json and
    registry.json; finished chunks are kept in OUT/annotations/cache, so a run after a stop
    captions only what is left."""
    from rich.console import Console

    from m3kit.benchmarks.supermemory.construct.captions import (
        Captioner,
        CaptionSettings,
        ModelCaptioner,
        SurrogateCaptioner,
        annotate_captions,
    )
    from m3kit.benchmarks.supermemory.construct.records import MAX_REPLY_TOKENS
    from m3kit.benchmarks.supermemory.construct.sessions import SessionInputs
    from m3kit.cli.options import parse_key_values
    from m3kit.cli.progress import StageProgress, model_calls_told

    settings = CaptionSettings(chunk_seconds=chunk_seconds, merge_below_seconds=merge_below,
                               context_chunks=context, frames_per_chunk=frames,
                               attempts=attempts)
    inputs = SessionInputs(person=person, starts=_read_starts(starts) if starts else {},
                           transcribe_missing=transcribe)
    console = Console(stderr=True)
    progress = StageProgress(console, _CAPTION_STAGES, quiet=quiet)
    backend = None
    captioner: Captioner = SurrogateCaptioner()
    if model is not None:
        from m3kit.harness.preflight import check_model
        from m3kit.models.backend import InspectBackend

        # fail in seconds on a missing key / unreachable server, before any video is touched
        resolved = check_model(model, parse_key_values(model_arg or [], "--model-arg"))
        backend = InspectBackend(resolved, max_tokens=MAX_REPLY_TOKENS,
                                 max_attempts=call_attempts, attempt_timeout=call_timeout,
                                 notify=progress.message, structured=_structured(structured))
        captioner = ModelCaptioner(backend, settings)
    with model_calls_told(backend, console), progress:
        report = annotate_captions(videos, out, captioner, settings, inputs, progress=progress)
    typer.echo(report.summary())
    for name in report.transcribed:
        typer.echo(f"transcribed: {name}")
    for skip in report.skipped:
        typer.echo(f"skipped: {skip}")


def _read_starts(path: Path) -> dict[str, float]:
    """``--starts``: a JSON object of video id → unix seconds."""
    from pydantic import TypeAdapter, ValidationError

    from m3kit.cli.options import OptionError

    try:
        return TypeAdapter(dict[str, float]).validate_json(path.read_bytes())
    except OSError as exc:
        raise OptionError(f"cannot be read: {exc.strerror or exc}", path=path,
                          field="--starts") from None
    except ValidationError as exc:
        raise OptionError(f"not a JSON object of video id -> unix seconds "
                          f"({exc.errors()[0]['msg']})", path=path, field="--starts") from None


_QUESTION_STAGES = {"ledgers": "persons' ledgers built", "questions": "QA pairs worked on"}


@app.command("questions")
def questions(
    root: Annotated[Path, typer.Argument(help="The benchmark root stage 1 captioned "
                                              "(annotations/captions/person_<n>/).")],
    model: Annotated[str, typer.Option("--model", help="An inspect model that answers in "
                                                       "JSON, e.g. openai-api/vllm/Qwen3.5-27B.")],
    model_arg: Annotated[list[str] | None, typer.Option(
        "-M", "--model-arg", help="Model argument key=value (repeatable).")] = None,
    target: Annotated[int | None, typer.Option(
        "--target", callback=at_least("--target", 1),
        help="QA pairs per person (default: --per-minute of their recordings).")] = None,
    per_minute: Annotated[float, typer.Option(
        "--per-minute", callback=at_least("--per-minute", 0.001),
        help="QA pairs per minute of a person's recordings.")] = 2.0,
    global_share: Annotated[float, typer.Option(
        "--global-share", callback=at_least("--global-share", 0),
        help="Share of pairs planned over the whole ledger; the rest over one day's.")] = 0.5,
    unanswerable: Annotated[float, typer.Option(
        "--unanswerable", callback=at_least("--unanswerable", 0),
        help="Share of unanswerable pairs.")] = 0.4,
    max_loops: Annotated[int, typer.Option(
        "--max-loops", callback=at_least("--max-loops", 1),
        help="Verifications of a pair in all (the enhancer rewrites between them).")] = 3,
    min_score: Annotated[float, typer.Option(
        "--min-score", callback=at_least("--min-score", 0),
        help="The least score of each verifier criterion (0..1).")] = 0.6,
    attempts: Annotated[int, typer.Option(
        "--attempts", callback=at_least("--attempts", 1),
        help="Replies per call before a malformed one rejects its pair.")] = 3,
    seed: Annotated[int, typer.Option("--seed", help="The choices' order.")] = 0,
    max_connections: Annotated[int, typer.Option(
        "--max-connections", callback=at_least("--max-connections", 1),
        help="Pairs worked on at once.")] = 8,
    call_attempts: CallAttemptsOption = DEFAULT_CALL_ATTEMPTS,
    call_timeout: CallTimeoutOption = DEFAULT_CALL_TIMEOUT,
    structured: StructuredOption = "off",
    quiet: QuietOption = False,
) -> None:
    """Stage 2: each person's Super Ledger, QA pairs planned, verified (code checks, the
    causality check, the verifier model) and enhanced; the accepted ones in
    ROOT/data/json/all_qa.json.

    Every pair's story is in ROOT/annotations/qa/person_<n>.json; finished pairs are kept in
    ROOT/annotations/cache, so a run after a stop works only on the unfinished ones."""
    from rich.console import Console

    from m3kit.benchmarks.supermemory.construct.questions import (
        QuestionSettings,
        annotate_questions,
    )
    from m3kit.benchmarks.supermemory.construct.records import MAX_REPLY_TOKENS
    from m3kit.cli.options import OptionError, parse_key_values
    from m3kit.cli.progress import StageProgress, model_calls_told
    from m3kit.errors import M3kitError
    from m3kit.harness.preflight import check_model
    from m3kit.models.backend import InspectBackend

    for name, share in (("--global-share", global_share), ("--unanswerable", unanswerable),
                        ("--min-score", min_score)):
        if share > 1:
            raise OptionError(f"must be at most 1, got {share:g}", field=name)
    settings = QuestionSettings(target=target, per_minute=per_minute, global_share=global_share,
                                unanswerable_share=unanswerable, max_loops=max_loops,
                                min_score=min_score, retries=attempts - 1, seed=seed,
                                max_connections=max_connections)
    # fail in seconds on a missing key / unreachable server, before any ledger is built
    resolved = check_model(model, parse_key_values(model_arg or [], "--model-arg"))
    console = Console(stderr=True)
    progress = StageProgress(console, _QUESTION_STAGES, quiet=quiet)
    # greedy and seeded: a rerun of the same settings asks the same questions
    backend = InspectBackend(resolved, seed=seed, max_tokens=MAX_REPLY_TOKENS,
                             max_attempts=call_attempts, attempt_timeout=call_timeout,
                             notify=progress.message, structured=_structured(structured))
    with model_calls_told(backend, console), progress:
        report = annotate_questions(root, backend, settings=settings, progress=progress)
    typer.echo(report.summary())
    for qa_id, why in report.rejections.items():
        typer.echo(f"rejected {qa_id}: {why}")
    typer.echo(f"all_qa.json: {report.all_qa} ({report.written} questions)")
    for skip in report.load_skips:
        typer.echo(f"loader skipped: {skip}")
    if report.load_skipped_questions:
        raise M3kitError(f"the loader skipped {len(report.load_skipped_questions)} accepted "
                         f"questions: {', '.join(report.load_skipped_questions)}")
    if report.unplaced_sessions:
        # a session left off a person's timeline hides its events from every memory: the
        # benchmark would run, and be wrong
        raise M3kitError("the loader left sessions off their person's timeline: "
                         f"{', '.join(report.unplaced_sessions)}")
    if not report.accepted:
        # nothing usable came out: one line saying why, exit 2 (every pair's story is written)
        raise M3kitError(f"no QA pair was accepted ({report.drafted} drafted): the reasons "
                         f"are in {root / 'annotations' / 'qa'}")


def _structured(value: str) -> StructuredOutput:
    """``--structured`` as the backend's setting, or an ``OptionError`` naming the choices."""
    from m3kit.cli.options import OptionError

    if value not in STRUCTURED_OUTPUTS:
        raise OptionError(f"one of {', '.join(STRUCTURED_OUTPUTS)}, got {value!r}",
                          field="--structured")
    return value
