"""Question generation for a built M3Eval-style benchmark, with any model backend.

Pipeline (paper, Appendix C): segmentation → per-frame-batch six-key captions
(``captions.py``) → one prompt per failure mode (``prompts.py``) → the deterministic design
checker (``checker.py``) → option shuffle keeping roles (seeded) → the released layout under the
root plus the review file (``review.py``); N-back: running-label annotation
(``nback_labels.py``) → Yes/No questions for every valid (K, N).

What each pair gets:

- divided attention (split-screen): source_confusion, order_disruption and content_forgetting
  storylines, asked identically of the ``swap0`` and the ``swap10`` video (so the swap − no-swap
  difference compares the same questions), and a source-memory item on the swap video (the
  paper's spatial source grounding uses "split-screen with frequent left/right swaps");
- memory interference: one item targeting video 1, asked identically of every concatenation
  order (the paper: "identical questions targeting the same video");
- interleaved: the three storylines, a false-source-attribution item and a source-memory item
  (temporal source grounding).

Drafts the checker rejects are not written to the question files; they appear in the review
file as ``rejected`` with the checker's reasons, beside the ``pending`` good ones. So do the other
rejections the run summary counts: a caption batch with no valid reply
(``<video>_caption_batch<i>``), a pair left without questions for want of captions (the pair
id), an N-back clip left unlabelled (``<instance>_clip<i>_label``).

Model calls run concurrently, at most ``GenerationConfig.max_connections`` in flight (caption
batches, question jobs and N-back instances alike; the clips of one N-back instance stay in
order, each prompt carrying the labels before it). Every finished unit is kept on disk
(``cache.py``: per video, per question job, per N-back instance, keyed by model, prompt and
inputs), so a rerun, or a run after a kill, calls the model only for unfinished work; checking,
shuffling and writing the files are cheap and redone each run.
"""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from m3kit.benchmarks.construction import ConstructionProgress, SilentProgress
from m3kit.benchmarks.m3eval.construct.captions import (
    CAPTION_PROMPT,
    VideoCaptions,
    caption_video_async,
    retry_note,
)
from m3kit.benchmarks.m3eval.construct.checker import (
    STORYLINE_MODES,
    DraftItem,
    FailureMode,
    OrderSlot,
    SwapSlot,
    Violation,
    check_item,
)
from m3kit.benchmarks.m3eval.construct.nback_labels import ClipLabel
from m3kit.benchmarks.m3eval.construct.plan import NBackInstance, PairPlan, load_plan
from m3kit.benchmarks.m3eval.construct.prompts import question_prompt
from m3kit.benchmarks.m3eval.construct.review import ReviewItem, write_review
from m3kit.benchmarks.m3eval.load import NBACK_FILE
from m3kit.errors import SchemaError
from m3kit.media.identity import file_stamp
from m3kit.models.backend import (
    BackendRequest,
    TextBackend,
    backend_name,
    both_or_stop,
    complete_async,
    gather_or_stop,
    json_object_reply,
)
from m3kit.models.call_cache import ResultCache

__all__ = [
    "DraftFormatError",
    "GenerationConfig",
    "GenerationReport",
    "generate_questions",
    "parse_draft",
    "shuffle_options",
]

QA_FILE = "m3kit_generated_qa.json"
# Finished units (captions of a video, the reply for a question job, labels of an N-back
# instance), so a rerun after a stop calls the model only for unfinished work.
CACHE_DIR = Path("build") / "generation"

STAGES = ("captions", "questions", "nback")


class DraftFormatError(SchemaError):
    """A question reply is not the requested JSON object."""


class GenerationConfig(BaseModel):
    caption_batches: int = Field(default=8, ge=1)
    frames_per_batch: int = Field(default=4, ge=1)
    max_attempts: int = Field(default=3, ge=1)  # replies per caption / draft / label
    max_side: int = Field(default=448, ge=16)
    nback_frames_per_clip: int = Field(default=8, ge=1)
    max_connections: int = Field(default=8, ge=1)  # model calls in flight at once
    seed: int = 0


class GenerationReport(BaseModel):
    """What a generation run produced: files, counts and each problem by item."""

    files: dict[str, int] = Field(default_factory=dict)  # released file -> records written
    passed: int = 0  # drafts the checker accepted (each may be written to several conditions)
    rejected: dict[str, str] = Field(default_factory=dict)  # draft id -> why
    pairs_skipped: dict[str, str] = Field(default_factory=dict)  # pair id -> why (no drafts)
    caption_batches: int = 0  # caption batches that parsed, over every video
    caption_failures: list[str] = Field(default_factory=list)
    label_failures: list[str] = Field(default_factory=list)  # N-back clips left unlabelled
    nback_written: int = 0
    review_csv: str = ""
    reused: int = 0  # units (videos, question jobs, N-back instances) taken from earlier runs

    def summary(self) -> str:
        files = ", ".join(f"{k}: {v}" for k, v in self.files.items()) or "none"
        # Every count here is a set of rows of the review file (see
        # ``generate_questions_async``), so the summary and ``m3kit m3eval review`` agree;
        # drafts, pairs and caption batches are counted each under its own name.
        return (f"{self.passed} drafts passed the checker, {len(self.rejected)} drafts "
                f"rejected; {len(self.pairs_skipped)} video pairs skipped (no usable captions); "
                f"{self.caption_batches} caption batches parsed, "
                f"{len(self.caption_failures)} caption batches rejected; "
                f"{self.nback_written} N-back questions, {len(self.label_failures)} N-back "
                f"clips unlabelled; files: {files}; {self.reused} finished units reused")

    @property
    def n_rejected_rows(self) -> int:
        """The ``rejected`` rows this run puts in the review file."""
        return (len(self.rejected) + len(self.pairs_skipped) + len(self.caption_failures)
                + len(self.label_failures))

    @property
    def questions_written(self) -> int:
        """Question records written, over every released file."""
        return sum(self.files.values())

    def hint(self) -> str | None:
        """One line saying why the run produced nothing usable, or ``None`` when it did.

        No caption batch parsed: the model does not answer the caption prompt with the
        caption JSON schema (a prose-only or text-only model), so no pair can get a question.
        Else, no question at all: every draft and N-back label was refused."""
        if self.caption_failures and not self.caption_batches:
            return (f"the model did not produce the caption schema: all "
                    f"{len(self.caption_failures)} caption batches were rejected, so no "
                    "question could be drafted; use a vision-language model that replies in "
                    f"JSON (the replies are in {self.review_csv or 'the review file'})")
        if not self.questions_written:
            return (f"no question was generated: {len(self.rejected)} drafts rejected, "
                    f"{len(self.pairs_skipped)} pairs skipped, {len(self.label_failures)} "
                    f"N-back clips unlabelled (reasons in {self.review_csv or 'the review file'})")
        return None


def parse_draft(text: str, mode: FailureMode, *, record: str | None = None) -> DraftItem:
    """The draft in a model reply (strict JSON, one optional markdown fence)."""
    raw = json_object_reply(text, DraftFormatError, record=record)
    design = raw.get("storyline_2x2_design") or {}
    slot_type = OrderSlot if mode == "order_disruption" else SwapSlot
    try:
        slots = {k: slot_type.model_validate(design[k]) for k in ("slot_1", "slot_2")
                 if isinstance(design, dict) and k in design}
        return DraftItem(
            failure_mode=mode,
            question=str(raw.get("question") or ""),
            options=raw.get("options") or {},
            option_role_by_letter=raw.get("option_role_by_letter") or {},
            target_video=str(raw.get("target_video") or ""),
            answer=raw.get("answer"),
            intrusion_option_letter=raw.get("intrusion_option_letter"),
            stem_anchor=raw.get("stem_anchor"),
            **slots,
        )
    except (ValidationError, TypeError, ValueError) as exc:
        reason = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        raise DraftFormatError(f"does not fit the item format: {reason}",
                               record=record) from None


def shuffle_options(
    item: DraftItem, rng: random.Random
) -> tuple[list[str], str, dict[str, str], str | None]:
    """Options as ``"A. text"`` in a seeded random order, each keeping its role.

    Returns (options, answer letter, role by new letter, intrusion letter). Source memory keeps
    its fixed ``Video 1`` / ``Video 2`` order (the labels are the answer space, not content).
    """
    letters = sorted(item.options)
    order = list(letters)
    if item.failure_mode != "source_memory":
        rng.shuffle(order)
    new_letter = {old: chr(65 + i) for i, old in enumerate(order)}
    options = [f"{new_letter[old]}. {item.options[old]}" for old in order]
    roles = {new_letter[old]: item.option_role_by_letter[old] for old in order
             if old in item.option_role_by_letter}
    answer_old = _answer_letter(item)
    intrusion = new_letter.get(item.intrusion_option_letter or "")
    return options, new_letter[answer_old], dict(sorted(roles.items())), intrusion


def generate_questions(
    root: str | Path,
    backend: TextBackend,
    *,
    config: GenerationConfig | None = None,
    progress: ConstructionProgress | None = None,
) -> GenerationReport:
    """Caption, generate, check, shuffle and write every question of the built ``root``.

    Finished model work is reused from earlier runs on the same root (see the module doc)."""
    return asyncio.run(generate_questions_async(root, backend, config=config,
                                                progress=progress))


async def generate_questions_async(
    root: str | Path,
    backend: TextBackend,
    *,
    config: GenerationConfig | None = None,
    progress: ConstructionProgress | None = None,
) -> GenerationReport:
    """``generate_questions`` on the running event loop."""
    from m3kit.benchmarks.m3eval.construct.nback_labels import nback_records

    config = config or GenerationConfig()
    root = Path(root)
    plan = load_plan(root)
    run = _Run(backend=backend, config=config,
               cache=ResultCache(root / CACHE_DIR, backend_name(backend)),
               progress=progress or SilentProgress(),
               limit=asyncio.Semaphore(config.max_connections))
    report = GenerationReport()
    sources = {s.id: s.path for pp in plan.pairs for s in (pp.pair.video1, pp.pair.video2)}
    jobs = [(pp, job) for index, pp in enumerate(plan.pairs) for job in _jobs(pp, index)]
    for name, total in zip(STAGES, (len(sources), len(jobs), len(plan.nback)), strict=True):
        run.progress.stage(name, total)

    async def questions() -> tuple[dict[str, VideoCaptions], list[_JobReply | None]]:
        captions = dict(zip(sources, await gather_or_stop(
            *(run.captions(sid, path) for sid, path in sources.items())), strict=True))
        replies = await gather_or_stop(*(run.job(job, pp, _pair_captions(pp, captions))
                                         for pp, job in jobs))
        return captions, list(replies)

    (captions, replies), labels = await both_or_stop(
        questions(), gather_or_stop(*(run.nback(instance) for instance in plan.nback)))
    report.reused = run.reused

    reviews: list[ReviewItem] = []
    records: dict[str, list[dict[str, Any]]] = {"split_screen": [], "memory_interference": [],
                                                "interleaved": []}
    # Every rejection the summary counts also gets a ``rejected`` row in the review file, with
    # its reason, so the two never disagree (a run whose captions all failed must not print
    # "2 rejected, 16 caption batches rejected" beside an empty review file).
    for sid, caps in captions.items():
        report.caption_batches += len(caps.batches)
        for fail in caps.rejected:
            batch = fail.batch
            why = f"{fail.reason} after {fail.attempts} replies"
            report.caption_failures.append(f"{sid} batch {batch.index}: {why}")
            reviews.append(ReviewItem(
                id=f"{sid}_caption_batch{batch.index}", status="rejected", paradigm="captions",
                failure_mode="caption_batch", video=sources[sid],
                checker=f"caption batch {batch.index} [{batch.start:g}-{batch.end:g} s]: {why}",
                note=_last_reply(fail.last_output)))
    for pp in plan.pairs:
        if _pair_captions(pp, captions) is None:
            why = "no usable captions for one of the videos"
            report.pairs_skipped[pp.pair.id] = why
            reviews.append(ReviewItem(
                id=pp.pair.id, status="rejected", paradigm="pair", failure_mode="captions",
                video=f"{pp.pair.video1.path} | {pp.pair.video2.path}",
                checker=f"{why}: no question job of the pair was run"))
    for (pp, job), reply in zip(jobs, replies, strict=True):
        pair_caps = _pair_captions(pp, captions)
        if reply is not None and pair_caps is not None:
            _check_job(job, pp, pair_caps, reply, config, report, reviews, records)
    nback_lines: list[dict[str, Any]] = []
    for instance, instance_labels in zip(plan.nback, labels, strict=True):
        for i, (c, lab) in enumerate(zip(instance.clips, instance_labels, strict=True)):
            if lab is None:
                why = (f"clip {c.source} [{c.start:g}-{c.end:g} s] has no label (no frames, or "
                       f"no valid reply in {config.max_attempts} attempts)")
                report.label_failures.append(f"{instance.id}: {why}")
                reviews.append(ReviewItem(
                    id=f"{instance.id}_clip{i:02d}_label", status="rejected", paradigm="nback",
                    failure_mode="clip_label", video=c.path, checker=why))
        for rec in nback_records(instance, instance_labels):
            nback_lines.append(rec)
            reviews.append(ReviewItem(
                id=rec["question_id"], paradigm="nback", failure_mode=rec["attribute"],
                video=rec["video"], question=rec["question"], options=rec["options"],
                answer=rec["answer"], note="labels: " + " / ".join(map(str, rec["labels"])),
            ))
    _write_outputs(root, records, nback_lines, report)
    csv_path, _ = write_review(root, reviews)
    report.review_csv = str(csv_path)
    return report


def _last_reply(text: str, limit: int = 300) -> str:
    """The model's last rejected reply, shortened for a review cell."""
    flat = " ".join(text.split())
    return "last reply: " + (flat if len(flat) <= limit else flat[:limit] + " ...")


def _write_outputs(root: Path, records: dict[str, list[dict[str, Any]]],
                   nback_lines: list[dict[str, Any]], report: GenerationReport) -> None:
    for folder, recs in records.items():
        if recs:
            path = root / "qa_root" / folder / QA_FILE
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(recs, indent=2, ensure_ascii=False) + "\n",
                            encoding="utf-8")
            report.files[path.relative_to(root).as_posix()] = len(recs)
    if nback_lines:
        path = root / NBACK_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in nback_lines),
                        encoding="utf-8")
        report.files[NBACK_FILE.as_posix()] = len(nback_lines)
        report.nback_written = len(nback_lines)


def _pair_captions(
    pair_plan: PairPlan, captions: dict[str, VideoCaptions]
) -> dict[str, VideoCaptions] | None:
    """Both videos' captions, or None when one has no usable batch."""
    video1 = captions.get(pair_plan.pair.video1.id)
    video2 = captions.get(pair_plan.pair.video2.id)
    if video1 is None or video2 is None or not video1.batches or not video2.batches:
        return None
    return {"video1": video1, "video2": video2}


# -- model work: concurrent, bounded, persisted --------------------------------------------------


class _JobReply(BaseModel):
    """The outcome of one question job's replies: the parsable reply, or why none was."""

    reply: str | None = None
    reason: str = ""


class _Labels(BaseModel):
    labels: list[ClipLabel | None]


class _Run:
    """The model work of one generation run: each unit is taken from the cache when its key
    matches, else computed (calls bounded by ``limit``) and stored at once."""

    def __init__(self, *, backend: TextBackend, config: GenerationConfig,
                 cache: ResultCache, progress: ConstructionProgress,
                 limit: asyncio.Semaphore) -> None:
        self.backend, self.config, self.cache = backend, config, cache
        self.progress, self.limit = progress, limit
        self.reused = 0

    def _hit(self, stage: str, value: Any) -> Any:
        if value is not None:
            self.reused += 1
            self.progress.advance(stage, reused=True)
        return value

    async def captions(self, source_id: str, path: str) -> VideoCaptions:
        cfg = self.config
        key = self.cache.key(CAPTION_PROMPT, file_stamp(path), cfg.caption_batches,
                             cfg.frames_per_batch, cfg.max_attempts, cfg.max_side)
        cached = self._hit("captions", self.cache.get("captions", source_id, key,
                                                      VideoCaptions))
        if cached is not None:
            return cached
        caps = await caption_video_async(
            path, self.backend, batches=cfg.caption_batches,
            frames_per_batch=cfg.frames_per_batch, max_attempts=cfg.max_attempts,
            max_side=cfg.max_side, limit=self.limit)
        self.cache.put("captions", source_id, key, caps)
        self.progress.advance("captions")
        self.progress.message(f"captioned {source_id}: {len(caps.batches)} batches, "
                              f"{len(caps.rejected)} rejected")
        return caps

    async def job(self, job: _Job, pair_plan: PairPlan,
                  caps: dict[str, VideoCaptions] | None) -> _JobReply | None:
        if caps is None:
            self.progress.advance("questions")
            return None
        paradigm = job.folder  # the review names the paradigm by its released folder
        context = "\n\n".join(caps[v].context(label)
                               for v, label in (("video1", "Video 1"), ("video2", "Video 2")))
        base_prompt = question_prompt(job.mode, paradigm, job.target, context)
        key = self.cache.key(base_prompt, self.config.max_attempts)
        cached = self._hit("questions", self.cache.get("questions", job.id, key, _JobReply))
        if cached is not None:
            return cached
        prompt, outcome = base_prompt, _JobReply()
        for attempt in range(self.config.max_attempts):
            async with self.limit:
                reply = await complete_async(self.backend, BackendRequest(
                    "questions", job.id, prompt, attempt=attempt))
            try:
                parse_draft(reply, job.mode, record=job.id)
            except DraftFormatError as exc:
                outcome.reason = exc.reason
                prompt = base_prompt + retry_note(exc.reason, "in the requested format")
                continue
            outcome = _JobReply(reply=reply)
            break
        self.cache.put("questions", job.id, key, outcome)
        self.progress.advance("questions")
        return outcome

    async def nback(self, instance: NBackInstance) -> list[ClipLabel | None]:
        from m3kit.benchmarks.m3eval.construct.nback_labels import (
            annotate_clips_async,
            label_prompt,
        )

        cfg = self.config
        key = self.cache.key(label_prompt([], []), [c.model_dump() for c in instance.clips],
                             [file_stamp(p) for p in sorted({c.path for c in instance.clips})],
                             cfg.nback_frames_per_clip, cfg.max_attempts, cfg.max_side)
        cached = self._hit("nback", self.cache.get("nback", instance.id, key, _Labels))
        if cached is not None:
            return cached.labels
        labels = await annotate_clips_async(
            instance.clips, self.backend, frames_per_clip=cfg.nback_frames_per_clip,
            max_attempts=cfg.max_attempts, max_side=cfg.max_side, limit=self.limit)
        self.cache.put("nback", instance.id, key, _Labels(labels=labels))
        self.progress.advance("nback")
        return labels


# -- jobs --------------------------------------------------------------------------------------


class _Job(BaseModel):
    id: str
    folder: str  # released folder
    mode: FailureMode
    target: str
    # (condition, probe key) pairs the item is written for; the record fields per condition.
    targets: list[tuple[str, str]]


def _jobs(pair_plan: PairPlan, index: int) -> list[_Job]:
    pair, probes = pair_plan.pair, pair_plan.probes
    # Alternate the target between pairs so both sides of the screen / stream get asked about.
    target = ("video1", "video2")[index % 2]
    swap_keys = [k for k in probes if k.startswith("swap")]
    swapping = [k for k in swap_keys if k != "swap0"]
    jobs: list[_Job] = []
    for mode in STORYLINE_MODES:
        jobs.append(_Job(id=f"{pair.id}_split_{mode}", folder="split_screen", mode=mode,
                         target=target, targets=[(k, k) for k in swap_keys]))
    if swapping:
        jobs.append(_Job(id=f"{pair.id}_split_source_memory", folder="split_screen",
                         mode="source_memory", target=target,
                         targets=[(k, k) for k in swapping]))
    interference = [k for k in probes if k not in swap_keys and k != "interleaved"]
    if interference:
        jobs.append(_Job(id=f"{pair.id}_interference", folder="memory_interference",
                         mode="memory_interference", target="video1",
                         targets=[(k, k) for k in interference]))
    if "interleaved" in probes:
        for mode in (*STORYLINE_MODES, "false_source_attribution", "source_memory"):
            jobs.append(_Job(id=f"{pair.id}_interleaved_{mode}", folder="interleaved",
                             mode=mode,
                             target="neither" if mode == "false_source_attribution" else target,
                             targets=[("interleaved", "interleaved")]))
    return jobs


def _check_job(
    job: _Job,
    pair_plan: PairPlan,
    caps: dict[str, VideoCaptions],
    outcome: _JobReply,
    config: GenerationConfig,
    report: GenerationReport,
    reviews: list[ReviewItem],
    records: dict[str, list[dict[str, Any]]],
) -> None:
    """Check the job's draft, and write it (shuffled) for every condition it serves."""
    paradigm = job.folder  # the review names the paradigm by its released folder
    if outcome.reply is None:
        report.rejected[job.id] = f"malformed: {outcome.reason}"
        reviews.append(ReviewItem(id=job.id, status="rejected", paradigm=paradigm,
                                  failure_mode=job.mode, checker=f"malformed: {outcome.reason}"))
        return
    draft = parse_draft(outcome.reply, job.mode, record=job.id)
    texts = {v: c.text() for v, c in caps.items()}
    result = check_item(draft, captions=texts)
    if draft.target_video != job.target:
        result.violations.append(Violation(
            rule="target", message=f"target_video is {draft.target_video!r}, the pipeline asked "
                                   f"for {job.target!r} (the probe videos are built for it)"))
    if not result.ok:
        report.rejected[job.id] = result.summary()
        reviews.append(ReviewItem(
            id=job.id, status="rejected", paradigm=paradigm, failure_mode=job.mode,
            question=draft.question, options=[f"{k}. {v}" for k, v in draft.options.items()],
            answer=draft.answer or "", roles=draft.option_role_by_letter,
            checker=result.summary()))
        return
    report.passed += 1
    rng = random.Random(f"{config.seed}:{job.id}")
    options, answer, roles, intrusion = shuffle_options(draft, rng)
    for condition, probe_key in job.targets:
        record = _record(job, condition, pair_plan.probes[probe_key], draft, options, answer,
                         roles, intrusion)
        record["pair_id"] = pair_plan.pair.id
        records[job.folder].append(record)
        reviews.append(ReviewItem(
            id=record["id"], paradigm=paradigm, failure_mode=job.mode, video=record["video"],
            question=record["question"], options=options, answer=answer,
            roles=record.get("option_role_by_letter", {}), checker="ok"))


def _record(
    job: _Job, condition: str, video: str, draft: DraftItem, options: list[str], answer: str,
    roles: dict[str, str], intrusion: str | None,
) -> dict[str, Any]:
    """One released-format record (field names of the M3Eval release)."""
    rec: dict[str, Any] = {
        "id": job.id if job.folder == "interleaved" else f"{job.id}_{condition}",
        "video": video,
        "question": draft.question,
        "options": options,
        "answer": answer,
        "target_video": draft.target_video,
    }
    if job.folder == "memory_interference":
        rec["paper_v4_metric_group"] = condition
        if condition in ("proactive", "retroactive"):
            rec["interference_direction"] = condition
        rec["option_role_by_letter"] = roles
        rec["intrusion_option_letter"] = intrusion
        return rec
    if job.mode in STORYLINE_MODES:
        rec["paper_v4_metric_detail"] = "storyline_reconstruction"
        rec["storyline_error_type"] = job.mode
        rec["option_role_by_letter"] = roles
    elif job.mode == "source_memory":
        rec["paper_v4_metric_detail"] = "source_memory"
    else:
        rec["paper_v4_metric_detail"] = "false_source_attribution"
    # The release names the dimension on every item of the two paradigms: space for the
    # split-screen, narrative (time) for the interleaved stream.
    rec["source_dimension"] = "spatial" if job.folder == "split_screen" else "narrative"
    if job.folder == "split_screen":
        rec["paper_v4_metric_group"] = condition
    return rec


def _answer_letter(item: DraftItem) -> str:
    if item.failure_mode in STORYLINE_MODES:
        return "A"
    if item.failure_mode == "memory_interference":
        return next(k for k, v in item.option_role_by_letter.items() if v == "correct")
    if item.failure_mode == "source_memory":
        return "A" if item.target_video == "video1" else "B"
    return next(k for k, v in item.options.items() if " ".join(v.split()).casefold()
                == "neither video")
