"""The M3Exam LLM judge: any inspect-ai model backend rates a prediction on the five-level
rubric (``m3kit.metrics.judge``). Replies go through inspect's response cache, so re-scoring the
same predictions with the same judge costs no calls."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from pydantic import BaseModel, ConfigDict, Field, field_validator

from m3kit.metrics.judge import JUDGE_SYSTEM, judge_agreement, judge_prompt, parse_judge_score

if TYPE_CHECKING:
    from inspect_ai.model import Model

OVERALL = "overall"  # the agreement table's column over every item
NO_GROUP = "(no group)"  # its column for the items without a group, beside named groups
# why a verdict whose call succeeded is unparsed (the paper scores it 0)
JUDGE_NO_LEVEL = "judge reply states no rubric level (scored 0)"
__all__ = [
    "JUDGE_NO_LEVEL",
    "NO_GROUP",
    "OVERALL",
    "HumanLabel",
    "JudgeOptions",
    "JudgeRequest",
    "JudgeVerdict",
    "agreement_table",
    "judge_agreement_report",
    "judge_answers",
    "judge_answers_async",
    "unique_labels",
]


class JudgeRequest(BaseModel):
    """One item to judge: the question, the canonical gold and the prediction."""

    model_config = ConfigDict(frozen=True)

    id: str
    question: str
    gold: str
    prediction: str


class JudgeVerdict(BaseModel):
    """The judge's reply and the level read from it; ``parsed`` is False when the reply
    stated no level (``score`` is then 0, as the paper scores a parse failure) or the call
    failed (``error`` says why)."""

    model_config = ConfigDict(frozen=True)

    id: str
    score: float
    parsed: bool
    reply: str
    error: str | None = None

    def failure(self) -> str:
        """Why the verdict is unparsed, on one line (the call's error, else the missing
        level); for a parsed verdict, empty."""
        if self.parsed:
            return ""
        return self.error or JUDGE_NO_LEVEL


def _resolve(model: str | Model, model_args: Mapping[str, Any] | None) -> Model:
    from inspect_ai.model import Model, get_model

    if isinstance(model, Model):
        return model
    return get_model(model, memoize=False, **dict(model_args or {}))


async def judge_answers_async(
    requests: Sequence[JudgeRequest],
    model: str | Model,
    *,
    model_args: Mapping[str, Any] | None = None,
    cache: bool = True,
    max_concurrency: int = 8,
    max_retries: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[JudgeVerdict]:
    """Judge every request (in order), at most ``max_concurrency`` calls at a time;
    ``progress(done, total)`` after each verdict.

    A call that fails (the backend is down, refuses) after inspect's retries
    (``max_retries``; inspect's default when ``None``) gives an unparsed verdict naming the
    error; the other items are still judged.
    """
    from inspect_ai.model import ChatMessage, ChatMessageSystem, ChatMessageUser, GenerateConfig

    from m3kit.harness.cache import cache_scope, response_cache

    judge = _resolve(model, model_args)
    policy = response_cache(cache, cache_scope(judge))
    config = GenerateConfig(temperature=0.0, max_tokens=256, max_retries=max_retries)
    limit = asyncio.Semaphore(max(1, max_concurrency))

    async def one(req: JudgeRequest) -> JudgeVerdict:
        messages: list[ChatMessage] = [
            ChatMessageSystem(content=JUDGE_SYSTEM),
            ChatMessageUser(content=judge_prompt(req.question, req.gold, req.prediction)),
        ]
        async with limit:
            try:
                output = await judge.generate(messages, config=config, cache=policy)
            except Exception as exc:  # noqa: BLE001 - any backend failure is reported per item
                reason = f"{type(exc).__name__}: {exc}".splitlines()[0]
                return JudgeVerdict(id=req.id, score=0.0, parsed=False, reply="", error=reason)
        reply = output.completion
        level = parse_judge_score(reply)
        return JudgeVerdict(
            id=req.id, score=level if level is not None else 0.0, parsed=level is not None,
            reply=reply,
        )  # fmt: skip

    done = 0

    async def counted(req: JudgeRequest) -> JudgeVerdict:
        nonlocal done
        verdict = await one(req)
        done += 1
        if progress is not None:
            progress(done, len(requests))
        return verdict

    return list(await asyncio.gather(*(counted(r) for r in requests)))


class JudgeOptions(TypedDict, total=False):
    """``judge_answers_async``'s keyword options, for callers that pass them through."""

    model_args: Mapping[str, Any] | None
    cache: bool
    max_concurrency: int
    max_retries: int | None
    progress: Callable[[int, int], None] | None


def judge_answers(
    requests: Sequence[JudgeRequest], model: str | Model, **options: Unpack[JudgeOptions]
) -> list[JudgeVerdict]:
    """``judge_answers_async`` from synchronous code (not from inside a running event loop)."""
    if not requests:
        return []
    return asyncio.run(judge_answers_async(requests, model, **options))


# --------------------------------------------------------------------------- agreement


class HumanLabel(BaseModel):
    """One line of a human-labelled judging file (JSONL), as Table 3 of the paper uses.

    ``human``: whether a person marked the prediction correct. ``group``: the task family the
    table reports separately (the paper: ``text``, ``image``, ``pdf``); optional: an item
    without one is counted in the ``overall`` column only (and under ``(no group)`` when other
    items have a group). ``overall`` and ``(no group)`` are reserved for those columns.
    ``judges``: scores (0-1) already given by named judges, compared as they are.
    """

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str
    question: str = ""
    gold: str = ""
    prediction: str = ""
    human: bool
    group: str | None = None
    judges: dict[str, float] = Field(default_factory=dict)

    @field_validator("group")
    @classmethod
    def _not_reserved(cls, group: str | None) -> str | None:
        if group is not None and group.strip() in (OVERALL, NO_GROUP):
            raise ValueError(f"group {group!r} is reserved for the table's own column")
        return group or None

    @field_validator("judges")
    @classmethod
    def _scores_in_range(cls, judges: dict[str, float]) -> dict[str, float]:
        for name, score in judges.items():
            if not 0 <= score <= 1:
                raise ValueError(f"judge {name!r} score {score} is outside 0-1")
        return judges


def unique_labels(labels: Sequence[HumanLabel]) -> tuple[list[HumanLabel], list[str]]:
    """The labels with each id once (the first kept), and one line per dropped duplicate."""
    seen: dict[str, int] = {}
    kept: list[HumanLabel] = []
    skipped: list[str] = []
    for position, lab in enumerate(labels, start=1):
        if lab.id in seen:
            skipped.append(f"{lab.id}: duplicate id (item {position}; the first, item "
                           f"{seen[lab.id]}, is kept)")
            continue
        seen[lab.id] = position
        kept.append(lab)
    return kept, skipped


def agreement_table(
    labels: Sequence[HumanLabel],
    scores: Mapping[str, Mapping[str, float]],
    *,
    threshold: float = 0.75,
) -> dict[str, dict[str, dict[str, Any]]]:
    """``{judge: {group: {"correct", "incorrect", "count", "agree", "accuracy"}}}``, with the
    human labels first as ``"human"`` (accuracy 1 by definition), as the paper's Table 3.

    Columns: each named group (sorted), then ``(no group)`` for the items without one when some
    items do have a group, then ``overall`` over every item. ``scores[judge][item id]`` is each
    judge's score; an item a judge has no score for is left out of that judge's cells (their
    ``count`` says how many were compared); a cell with nothing compared has ``accuracy``
    ``None`` (0/0 is not 0% agreement).
    """
    named = sorted({lab.group for lab in labels if lab.group is not None})
    columns: list[tuple[str, list[HumanLabel]]] = [
        (group, [lab for lab in labels if lab.group == group]) for group in named
    ]
    ungrouped = [lab for lab in labels if lab.group is None]
    if ungrouped and named:
        columns.append((NO_GROUP, ungrouped))
    columns.append((OVERALL, list(labels)))
    table: dict[str, dict[str, dict[str, Any]]] = {"human": {}}
    for column, members in columns:
        n_true = sum(lab.human for lab in members)
        table["human"][column] = {
            "count": len(members), "correct": n_true, "incorrect": len(members) - n_true,
            "agree": len(members), "accuracy": 1.0 if members else None,
        }  # fmt: skip
    for name, by_id in scores.items():
        row: dict[str, dict[str, Any]] = {}
        for column, members in columns:
            scored = [lab for lab in members if lab.id in by_id]
            result = judge_agreement(
                [lab.human for lab in scored], [by_id[lab.id] for lab in scored],
                threshold=threshold,
            )  # fmt: skip
            row[column] = {
                "count": result.count, "correct": result.judged_correct,
                "incorrect": result.judged_incorrect, "agree": result.agree,
                "accuracy": result.accuracy,
            }  # fmt: skip
        table[name] = row
    return table


def judge_agreement_report(
    labels: Sequence[HumanLabel],
    judge_models: Sequence[str] = (),
    *,
    model_args: Mapping[str, Any] | None = None,
    threshold: float = 0.75,
    cache: bool = True,
) -> dict[str, Any]:
    """Agreement of each judge with the human labels: the scores the file already holds
    (``judges``) and, for each of ``judge_models``, scores computed now on the file's items.

    An id seen again is not counted twice: the first item with it is kept and each later one
    is listed in ``skipped`` (the report always has that key)."""
    labels, skipped = unique_labels(labels)
    scores: dict[str, dict[str, float]] = defaultdict(dict)
    for lab in labels:
        for name, score in lab.judges.items():
            scores[name][lab.id] = score
    failures: list[str] = []
    resolved = {}
    if judge_models:
        from m3kit.harness.preflight import check_model

        # Every judge is checked before any is asked: an unreachable server fails at once.
        resolved = {name: check_model(name, model_args) for name in judge_models}
    for name in judge_models:
        requests = [
            JudgeRequest(id=lab.id, question=lab.question, gold=lab.gold, prediction=lab.prediction)
            for lab in labels
        ]
        verdicts = judge_answers(requests, resolved[name], model_args=model_args, cache=cache)
        scores[name] = {v.id: v.score for v in verdicts}
        failures += [f"{name} {v.id}: {v.error or 'no rubric level (scored 0)'}" for v in verdicts
                     if not v.parsed]  # fmt: skip
    report: dict[str, Any] = {
        "threshold": threshold,
        "table": agreement_table(labels, scores, threshold=threshold),
        "skipped": skipped,
    }
    if failures:
        report["judge_failures"] = failures
    return report
