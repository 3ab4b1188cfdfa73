"""M3Exam as an inspect task: persona conversations, a regime, a model, per-item EM/F1/BLEU-1.

    m3kit eval m3exam -T data=/path/to/Alex_Veterinarian -T regime=oracle --model m3kit/builtin

Task arguments:

- ``data``: a persona folder, or a folder of persona folders (released layout, read by
  ``m3kit.benchmarks.m3exam.load.load_m3exam``; what it skips is logged and kept in the task's
  metadata);
- ``regime``: ``oracle`` (the default without a memory), ``full``, ``text``/``multimodal``
  (oracle with descriptions/pixels), ``oracle-text``, ``full-text``, ``memory=<name>``;
  ``modality`` overrides the text/multimodal choice; ``memory`` (``m3kit eval --memory``) and
  ``memory_config`` pick a memory of ``m3kit.memory`` (see ``regimes.py`` for each). A memory
  with a regime that shows the conversation directly (``full``, ``text``...) is refused before
  any work. Left out, ``regime`` is recorded as ``None`` in the log's task arguments; the
  regime that ran is the task metadata's ``m3kit_regime`` (``memory=<name>`` under a memory);
- ``types``: only these question types (``"mr,fm"`` or a list);
- limits: ``max_images`` (10), ``max_pdf_pages`` (30), ``dpi`` (144), ``token_budget``
  (32000), ``image_tokens`` (256);
- ``judge_model``: an inspect model that scores answers on the paper's five-level rubric
  (``m3kit.benchmarks.m3exam.judge``); without it no LLM-J is computed;
- ``fj_letter``: score fj items by the option letter the answer states (m3kit's addition);
  off, as the paper scores them, the whole normalised answer must be the gold letter. The rule
  is the task metadata's ``m3kit_fj_rule`` (``exact`` or ``letter``);
- ``cache``: the response cache (on).

Each sample records, next to inspect's own record, m3kit's ``SampleRecord`` (usage: prompt and
completion tokens, images sent, raw-media escalations, index-build seconds) and an ``"m3exam"``
entry with what the regime showed (sessions, rounds, images, pages, withheld attachments,
evicted rounds, fm candidates). The scorer stores EM, F1 and BLEU-1 per item with the rules of
``m3kit.metrics.text_match`` (the same per-item function ``m3kit score m3exam`` uses), and
LLM-J when ``judge_model`` is given.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from inspect_ai import Task, task
from inspect_ai.solver import solver

from m3kit.benchmarks.m3exam.load import QUESTION_TYPES, data_files, media_files
from m3kit.benchmarks.m3exam.locomo import LOCOMO_TYPES
from m3kit.benchmarks.m3exam.prompt import attachment_name, prompt_template, question_prompt
from m3kit.benchmarks.m3exam.regimes import (
    ContextBlocks,
    MediaBlock,
    Regime,
    RegimeError,
    build_context,
    oracle_sessions,
    parse_regime,
)
from m3kit.benchmarks.m3exam.score import scoring_rules
from m3kit.benchmarks.m3exam.scorer import m3exam_answer
from m3kit.benchmarks.m3exam.stream import conversation_stream
from m3kit.errors import M3kitError
from m3kit.harness import sample_state as steps
from m3kit.harness.card import data_fingerprint, task_card_metadata
from m3kit.harness.defaults import task_generate_config
from m3kit.harness.skips import warn_skipped
from m3kit.harness.solvers import direct_solver, memory_solver
from m3kit.metrics.text_match import FjRule
from m3kit.schema import Conversation, ImageRef, PdfPageRef, Question, SkippedRecord
from m3kit.schema.card import ReproCard
from m3kit.schema.evallog import (
    BENCHMARK_KEY,
    FJ_RULE_KEY,
    MEMORY_KEY,
    MEMORY_NAME_KEY,
    QUESTION_KEY,
    REGIME_CONFIG_KEY,
    REGIME_KEY,
    SKIPPED_KEY,
    SampleRecord,
    sample_question,
)

if TYPE_CHECKING:
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import Content
    from inspect_ai.solver import Solver, TaskState

    from m3kit.benchmarks.m3exam.load import M3ExamData
    from m3kit.memory.base import Memory, MemoryAnswer, MemoryEvent

__all__ = [
    "M3EXAM_KEY",
    "conversation_stream",
    "locomo",
    "m3exam",
    "m3exam_context_answer",
    "m3exam_dataset",
    "m3exam_memory_answer",
    "m3exam_task",
    "oracle_posable",
]

logger = logging.getLogger(__name__)

M3EXAM_KEY = "m3exam"  # the sample-metadata entry describing what the regime showed


# -- dataset --------------------------------------------------------------------------------------


def _sample(question: Question, regime: Regime) -> Sample:
    from inspect_ai.dataset import Sample

    return Sample(
        id=question.id,
        input=question_prompt(question),  # the solver builds the real message around it
        target=[question.answer, *question.alternatives],
        metadata={
            QUESTION_KEY: question.model_dump(mode="json"),
            MEMORY_KEY: str(question.metadata.get("persona", question.id)),
            "question_type": question.question_type,
            "persona": question.metadata.get("persona"),
            "regime": regime.name,
        },
    )


def m3exam_dataset(questions: Sequence[Question], regime: Regime, *, name: str = "m3exam"
                   ) -> MemoryDataset:
    """One sample per question, in order; the ``Question`` rides in the metadata."""
    from inspect_ai.dataset import MemoryDataset

    return MemoryDataset([_sample(q, regime) for q in questions], name=name)


def _question(metadata: Mapping[str, Any]) -> Question:
    return sample_question(metadata)


# -- shared solver pieces -------------------------------------------------------------------------


def _shown_entry(shown: dict[str, Any]) -> dict[str, Any]:
    return {M3EXAM_KEY: shown}


def _conversation(conversations: Mapping[str, Conversation], question: Question) -> Conversation:
    persona = question.metadata.get("persona")
    try:
        return conversations[str(persona)]
    except KeyError:
        raise M3kitError(f"no conversation for persona {persona!r}", record=question.id,
                         field="metadata.persona") from None


async def _media_content(block: MediaBlock, regime: Regime) -> Content:
    """An attachment as inline image content (inspect refuses file paths at the model
    boundary), through the pixel bound every sent image passes
    (``m3kit.media.image.image_data_uri``); a PDF page is rendered to a cached PNG first, at
    the regime's dpi."""
    from inspect_ai.model import ContentImage

    from m3kit.media.image import image_data_uri

    path = block.ref.path
    if isinstance(block.ref, PdfPageRef):
        from m3kit.media.pdf import render_pdf_page_file

        ref = block.ref
        path = str(await anyio.to_thread.run_sync(partial(
            render_pdf_page_file, ref.path, ref.page, dpi=regime.dpi
        )))
    elif path.startswith(("http://", "https://")):
        from m3kit.errors import MediaError

        raise MediaError("a remote image is not fetched (m3kit runs offline): use the text "
                         "regime, which sends its description", path=path,
                         record=block.round_id)
    return ContentImage(image=await anyio.to_thread.run_sync(partial(
        image_data_uri, path, record=block.round_id)))


def _shown(context: ContextBlocks, regime: Regime) -> dict[str, Any]:
    return {
        "regime": regime.name,
        "sessions": context.sessions,
        "rounds": context.rounds,
        "images": context.images,
        "pages": context.pages,
        "withheld": context.withheld,
        "evicted_rounds": context.evicted_rounds,
        "estimated_tokens": context.estimated_tokens,
        "candidates": context.candidates,
        "missing_evidence": context.missing_evidence,
    }


# -- direct regimes (oracle, full) ----------------------------------------------------------------


@solver
def m3exam_context_answer(
    conversations: Mapping[str, Conversation], regime: Regime, cache: bool = True
) -> Solver:
    """The regime's context (text and media, in reading order), then the question, to the model
    under evaluation in one user message."""
    # The full history does not depend on the question: built once per persona.
    full_contexts: dict[str, ContextBlocks] = {}

    def context_for(question: Question, conversation: Conversation) -> ContextBlocks:
        if regime.kind != "full":
            return build_context(question, conversation, regime)
        if conversation.id not in full_contexts:
            full_contexts[conversation.id] = build_context(question, conversation, regime)
        return full_contexts[conversation.id]

    async def message(state: TaskState, question: Question,
                      record: SampleRecord) -> tuple[list[Content], int]:
        # what the regime showed rides in the sample's metadata, also when the context fails
        state.metadata.update(_shown_entry({"regime": regime.name}))
        conversation = _conversation(conversations, question)
        context = await steps.timed(record, "context", anyio.to_thread.run_sync(
            partial(context_for, question, conversation)
        ))
        state.metadata.update(_shown_entry(_shown(context, regime)))
        record.skipped = list(context.skipped)  # images the pixel bound kept from the model
        content = await steps.timed(record, "context",
                                    _message_content(context, question, regime))
        record.frames = [_media_label(b) for b in context.media]
        return content, context.images + context.pages

    return direct_solver(message, cache=cache, failure="context:",
                         scope=lambda _q: {"frames": {"m3exam_regime":
                                                      regime.model_dump(mode="json")}})


async def _message_content(context: ContextBlocks, question: Question, regime: Regime
                           ) -> list[Content]:
    """The context's text and media in reading order, then the question prompt."""
    from inspect_ai.model import ContentText

    content: list[Content] = [ContentText(text="Conversation history:")]
    lines: list[str] = []
    for block in context.blocks:
        if isinstance(block, str):
            lines.append(block)
            continue
        if lines:
            content.append(ContentText(text="\n".join(lines)))
            lines = []
        content.append(await _media_content(block, regime))
    lines += ["", question_prompt(question, context.candidates)]
    content.append(ContentText(text="\n".join(lines)))
    return content


def _media_label(block: MediaBlock) -> str:
    if isinstance(block.ref, PdfPageRef):
        return f"{block.ref.path}#page={block.ref.page + 1}"
    return block.ref.path


# -- memory regime --------------------------------------------------------------------------------


def _all_image_names(conversation: Conversation) -> list[str]:
    return [attachment_name(a) for r in conversation.iter_rounds() for a in r.attachments
            if isinstance(a.media, ImageRef)]


@solver
def m3exam_memory_answer(
    conversations: Mapping[str, Conversation],
    memory: str | Memory,
    memory_config: dict[str, Any] | None = None,
    cache: bool = True,
) -> Solver:
    """The persona's conversation goes into ``memory`` once (memory key = persona); the memory
    answers the question prompt with the model under evaluation and reports what it cost.

    A memory retrieves after the prompt is written, so the fm candidates listed are every image
    of the conversation (the paper lists those attached from the retrieved rounds).
    """
    mem = steps.resolve_memory(memory, memory_config, none_hint="use regime=oracle or full",
                               error=RegimeError)

    async def events(state: TaskState, question: Question,
                     record: SampleRecord) -> list[MemoryEvent]:
        conversation = _conversation(conversations, question)
        return await steps.timed(record, "ingest", anyio.to_thread.run_sync(
            partial(conversation_stream, conversation)))

    def prompt(_state: TaskState, question: Question) -> str:
        return question_prompt(question, _candidates(question))

    def _candidates(question: Question) -> list[str]:
        return _all_image_names(_conversation(conversations, question))

    def shown(_state: TaskState, question: Question, answer: MemoryAnswer | None, *,
              ingested: bool) -> dict[str, Any]:
        entry: dict[str, Any] = {"regime": f"memory={mem.name}"}
        if ingested:
            candidates = _candidates(question)
            entry["candidates"] = candidates if question.question_type == "fm" else []
        if answer is not None:
            entry["retrieved"] = list(answer.usage.retrieved_ids)
        return _shown_entry(entry)

    # the memory retrieves with the bare question; the model gets the answering prompt
    return memory_solver(mem, events=events, prompt=prompt, cache=cache, media_errors=False,
                         extra=shown)


# -- the task -------------------------------------------------------------------------------------


def _types(types: str | int | Sequence[str | int] | None, known: Sequence[str] = QUESTION_TYPES
           ) -> set[str] | None:
    if types is None or types == "":
        return None
    parts = types.split(",") if isinstance(types, str) else (
        [types] if isinstance(types, int) else types)
    wanted = {str(t).strip().lower() for t in parts if str(t).strip()}
    unknown = wanted - set(known)
    if unknown:
        raise RegimeError(f"unknown question types {sorted(unknown)}; known: "
                          f"{', '.join(known)}", field="types")
    return wanted


# The loader's fields for a question's supporting facts (M3Exam's and LoCoMo's)
EVIDENCE_FIELDS = ("supporting_facts", "evidence")


def oracle_posable(data: M3ExamData, questions: Sequence[Question]
                   ) -> tuple[list[Question], list[SkippedRecord]]:
    """The questions the oracle regime can pose, and one named skip for each it cannot: the
    paper's oracle setting shows the sessions holding the question's supporting facts
    (Appendix B), so a question with none in its conversation has no context as defined. The
    skip replaces the loader's note on that question's supporting facts ("question kept"),
    taking its file; ``data.skipped`` keeps the loader's other records."""
    posable: list[Question] = []
    skipped: list[SkippedRecord] = []
    for question in questions:
        conversation = data.conversations.get(str(question.metadata.get("persona")))
        if conversation is None or oracle_sessions(question, conversation)[0]:
            posable.append(question)  # no conversation: the solver names that failure
            continue
        notes = [s for s in data.skipped
                 if s.record == question.id and s.field in EVIDENCE_FIELDS]
        file = notes[0].file if notes else str(conversation.metadata.get(
            "source", conversation.metadata.get("folder", conversation.id)))
        field = notes[0].field if notes else EVIDENCE_FIELDS[0]
        facts = ", ".join(question.evidence) or "none"
        skipped.append(SkippedRecord.at(
            file, question.id, "question skipped under the oracle regime: no supporting-fact "
            f"round is in the conversation, so there is no session to show (supporting facts: "
            f"{facts})", field))
    return posable, skipped


CONVERSATION_EMBEDDER = "e5-small"
"""The embedder these tasks give ``rag`` and ``proctor`` (and their variants) when
``memory_config`` names none: on Alex_Veterinarian and LoCoMo each, it was chosen on one and
beat MiniLM on the other (docs/benchmarks.md, "Retrieval that holds on unseen data"). Not every
memory's default: on the video suites (the quickstart) it was not better."""


def with_conversation_embedder(memory: str | Memory | None,
                               memory_config: Mapping[str, Any] | None
                               ) -> dict[str, Any] | None:
    """``memory_config`` with ``embedder: CONVERSATION_EMBEDDER`` added when ``memory`` names
    ``rag`` or ``proctor`` (or a memory built on either) and the config names no embedder;
    else as given. An unknown name is left to the memory's own resolution to report."""
    from m3kit.memory import RagMemory
    from m3kit.memory.proctor import ProctorMemory
    from m3kit.memory.registry import memory_factory

    config = dict(memory_config) if memory_config else None
    if not isinstance(memory, str) or (config and "embedder" in config):
        return config
    try:
        factory = memory_factory(memory)
    except ValueError:  # unknown, refused (MemoryPluginError) or ``none``
        return config
    body = factory.func if isinstance(factory, partial) else factory
    if isinstance(body, type) and issubclass(body, RagMemory | ProctorMemory):
        return {"embedder": CONVERSATION_EMBEDDER, **(config or {})}
    return config


def m3exam_task(
    data: M3ExamData,
    regime: Regime,
    *,
    memory_config: dict[str, Any] | None = None,
    types: str | int | Sequence[str | int] | None = None,
    cache: bool = True,
    name: str = "m3exam",
    known_types: Sequence[str] = QUESTION_TYPES,
    judge_model: str | None = None,
    fj_letter: bool = False,
    question_files: Sequence[Path] = (),
) -> Task:
    """An inspect task over loaded M3Exam-shaped ``data`` (M3Exam or LoCoMo) in ``regime``;
    ``fj_letter`` scores fj items by the letter the answer states (else the whole answer);
    ``question_files``: the files ``data`` was read from (the reproducibility card's data
    fingerprint, with the images and PDFs of ``data``: ``media_files``).
    Under the oracle regime a question without a supporting-fact round in its conversation is
    skipped (``oracle_posable``), listed with the loader's skips in ``SKIPPED_KEY``."""
    fj_rule: FjRule = "letter" if fj_letter else "exact"
    wanted = _types(types, known_types)
    questions = [q for q in data.questions if wanted is None or q.question_type in wanted]
    skipped = list(data.skipped)
    if regime.kind == "oracle":
        questions, unposable = oracle_posable(data, questions)
        replaced = {(s.record, s.field) for s in unposable}
        skipped = [s for s in skipped if (s.record, s.field) not in replaced] + unposable
    if regime.kind == "memory":
        assert regime.memory is not None
        memory_config = with_conversation_embedder(regime.memory, memory_config)
        chosen = m3exam_memory_answer(data.conversations, regime.memory,
                                      memory_config=memory_config, cache=cache)
    else:
        chosen = m3exam_context_answer(data.conversations, regime, cache=cache)
    card = ReproCard.with_prompt(
        prompt_template(), benchmark=name, task=name, memory=regime.memory,
        memory_config=dict(memory_config) if regime.memory and memory_config else None,
        judge_model=judge_model,
        data_fingerprint=data_fingerprint(question_files, media_files(data)),
        scoring=scoring_rules(fj_rule),
        settings={"regime": regime.name, "regime_config": regime.model_dump(mode="json"),
                  "types": sorted(wanted) if wanted is not None else "all"},
    )
    return Task(
        dataset=m3exam_dataset(questions, regime, name=name),
        solver=chosen,
        scorer=m3exam_answer(judge_model=judge_model, fj_rule=fj_rule),
        config=task_generate_config(),
        metadata={
            BENCHMARK_KEY: name,
            REGIME_KEY: regime.name,
            MEMORY_NAME_KEY: regime.memory,
            REGIME_CONFIG_KEY: regime.model_dump(mode="json"),
            SKIPPED_KEY: [str(s) for s in skipped],
            FJ_RULE_KEY: fj_rule,
            **task_card_metadata(card),
        },
    )


@task
def m3exam(
    data: str | None = None,
    regime: str | None = None,
    modality: str | None = None,
    memory: str | None = None,
    memory_config: dict[str, Any] | None = None,
    types: str | list[str] | None = None,
    max_images: int = 10,
    max_pdf_pages: int = 30,
    dpi: int = 144,
    token_budget: int = 32_000,
    image_tokens: int = 256,
    judge_model: str | None = None,
    fj_letter: bool = False,
    cache: bool = True,
) -> Task:
    """M3Exam: multi-session multimodal conversational memory; regime ``oracle`` unless
    ``regime`` (or ``memory``) says otherwise; ``types`` filters question types."""
    from m3kit.benchmarks.m3exam.load import load_m3exam

    return _task_from_data(
        "M3Exam", data, "<persona folder or folder of personas>", load_m3exam, types,
        QUESTION_TYPES,
        regime={"regime": regime, "default": "oracle", "modality": modality, "memory": memory,
                "max_images": max_images, "max_pdf_pages": max_pdf_pages, "dpi": dpi,
                "token_budget": token_budget, "image_tokens": image_tokens},
        memory_config=memory_config, cache=cache, judge_model=judge_model, fj_letter=fj_letter,
    )


def _task_from_data(label: str, data: str | None, hint: str,
                    load: Callable[[str], M3ExamData],
                    types: str | int | Sequence[str | int] | None,
                    known: Sequence[str], *, regime: dict[str, Any], **options: Any) -> Task:
    """The task over ``load(data)``: arguments checked before the data is read, what the
    loader skipped logged (and kept in the task's metadata by ``m3exam_task``)."""
    if not data:
        raise M3kitError(f"{label} needs its data: -T data={hint}", field="data")
    _types(types, known)  # a bad filter is reported before the data is read
    spec = parse_regime(**regime)
    built = m3exam_task(load(data), spec, types=types, known_types=known,
                        question_files=data_files(data), **options)
    warn_skipped(logger, label, (built.metadata or {})[SKIPPED_KEY])
    return built


@task
def locomo(
    data: str | None = None,
    regime: str | None = None,
    modality: str | None = None,
    memory: str | None = None,
    memory_config: dict[str, Any] | None = None,
    types: str | int | list[str | int] | None = None,
    max_images: int = 10,
    token_budget: int = 32_000,
    image_tokens: int = 256,
    fj_letter: bool = False,
    cache: bool = True,
) -> Task:
    """LoCoMo (``locomo10.json``) through the same regimes and scorer as M3Exam.

    Defaults to the text regime (the memory regime under ``--memory``): LoCoMo's images are
    web URLs (never fetched: m3kit runs offline) with BLIP captions, which stand in for them.
    ``types`` filters by category 1-5 (``-T types=3`` or ``-T types=1,2``).
    Scored with graded EM / F1 / BLEU-1 against the answer (``m3kit.metrics.text_match``);
    adversarial items (category 5) by LoCoMo's rule: credit only for saying the conversation
    does not tell.
    """
    from m3kit.benchmarks.m3exam.locomo import load_locomo

    return _task_from_data(
        "LoCoMo", data, "<locomo10.json>", load_locomo, types, LOCOMO_TYPES,
        regime={"regime": regime, "default": "text", "modality": modality, "memory": memory,
                "max_images": max_images, "token_budget": token_budget,
                "image_tokens": image_tokens},
        memory_config=memory_config, cache=cache, name="locomo", fj_letter=fj_letter,
    )
