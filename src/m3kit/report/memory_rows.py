"""What a row of a memory table is: one system (a benchmark's label: one answer model with one
setting, its logs pooled as ``m3kit report`` pools them), its answer model, its memory and the
memory's class, and whether its answer model is the table's.

The class, for the M3Exam paper's main table (seed 002, Table 2), which groups memory systems as
*text-based* and *multimodal*. A report reads logs and knows nothing of the memories
themselves, so the class is read from what the log records, by the first rule that applies:

1. no memory (a direct regime: oracle, full...): ``none``;
2. the run's memory settings (``-T memory_config=``) set ``send_images`` or ``vision`` to a
   boolean: ``multimodal`` when true, ``text`` when false;
3. the memory's name ends in ``-mm``, ``-vision`` or ``-multimodal``: ``multimodal``; in
   ``-text``: ``text``;
4. otherwise what reached the answer model: ``multimodal`` when any of the row's questions sent
   it an image or page (``Usage.images_sent``), else ``text`` (plain ``context`` sends images
   by default, plain ``rag`` their text surrogates).

Runs of different answer models are never one row (the pooling splits them); where the rows of
one table do not all share one answer model (name and arguments), the rows whose model is not
the one most rows use are flagged (``model_differs``): a difference between them is not their
memories' alone, as ``m3kit compare`` warns when two runs' cards differ.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from m3kit.benchmarks import Benchmark
from m3kit.schema.evallog import MEMORY_NAME_KEY, LoggedRun, LoggedSample

__all__ = [
    "CLASS_TITLES",
    "FLAG",
    "IMAGE_SETTINGS",
    "MULTIMODAL_SUFFIXES",
    "TEXT_SUFFIXES",
    "MemoryClass",
    "RunIdentity",
    "flag_models",
    "memory_class",
    "model_note",
    "run_identity",
]

MemoryClass = Literal["none", "text", "multimodal"]

# The memory settings that say whether images reach the system (rule 2).
IMAGE_SETTINGS = ("send_images", "vision")
# The name endings that say it (rule 3): ``rag-mm``, ``mem0-vision``; ``rag-text``.
MULTIMODAL_SUFFIXES = ("-mm", "-vision", "-multimodal")
TEXT_SUFFIXES = ("-text",)

# A group's heading, in the paper's order: the no-memory reference first.
CLASS_TITLES: dict[MemoryClass, str] = {
    "none": "No memory (direct)",
    "text": "Text-based memory systems",
    "multimodal": "Multimodal memory systems",
}

FLAG = "†"  # after the label of a row whose answer model is not the table's


class RunIdentity(BaseModel):
    """One row's system: ``benchmark``, ``system`` (its label), the answer ``model`` and its
    arguments (without credentials, as the card records them), the ``memory`` (``None``:
    answered directly), its class and the rule that gave it (``class_rule``), and whether its
    answer model differs from the one most rows of its table use (``model_differs``)."""

    model_config = ConfigDict(frozen=True)

    benchmark: str
    system: str
    model: str
    model_args: dict[str, Any] = Field(default_factory=dict)
    memory: str | None = None
    memory_class: MemoryClass
    class_rule: str
    model_differs: bool = False

    @property
    def answer_model(self) -> str:
        """The model with its arguments, as the flag's note names it."""
        if not self.model_args:
            return self.model
        args = ", ".join(f"{k}={v}" for k, v in sorted(self.model_args.items()))
        return f"{self.model} ({args})"

    @property
    def label(self) -> str:
        """The system's label, flagged (``FLAG``) when its answer model is not the table's."""
        return f"{self.system} {FLAG}" if self.model_differs else self.system


def memory_class(memory: str | None, config: Mapping[str, Any] | None,
                 samples: Sequence[LoggedSample]) -> tuple[MemoryClass, str]:
    """The class of a memory run and the rule that gave it (see the module docstring)."""
    if memory is None:
        return "none", "no memory: answered directly"
    for name in IMAGE_SETTINGS:
        value = (config or {}).get(name)
        if isinstance(value, bool):
            return ("multimodal" if value else "text"), f"memory_config {name}={value}"
    name = memory.lower()
    if name.endswith(MULTIMODAL_SUFFIXES):
        return "multimodal", f"the name {memory!r} ends in {name[name.rindex('-'):]}"
    if name.endswith(TEXT_SUFFIXES):
        return "text", f"the name {memory!r} ends in -text"
    if any(sample.usage.images_sent for sample in samples):
        return "multimodal", "it sent images to the answer model"
    return "text", "it sent no image to the answer model"


def _memory(run: LoggedRun) -> tuple[str | None, Mapping[str, Any] | None]:
    """The run's memory name and settings: its card's, else its task's metadata and
    arguments (a log without a card)."""
    if run.card is not None and run.card.memory:
        return run.card.memory, run.card.memory_config
    name = run.metadata.get(MEMORY_NAME_KEY)
    config = run.task_args.get("memory_config")
    return (str(name) if name else None), (config if isinstance(config, Mapping) else None)


def run_identity(benchmark: Benchmark, run: LoggedRun) -> RunIdentity:
    """The row of ``run`` (one system's pooled run): labelled as ``benchmark`` labels it, its
    memory classed by ``memory_class``; not flagged (``flag_models`` compares the rows)."""
    memory, config = _memory(run)
    cls, rule = memory_class(memory, config, run.samples)
    label = benchmark.reporting.load().system_label
    return RunIdentity(benchmark=benchmark.name, system=label(run), model=run.model,
                       model_args=dict(run.card.model_args) if run.card is not None else {},
                       memory=memory, memory_class=cls, class_rule=rule)


def flag_models(rows: Sequence[RunIdentity]) -> list[RunIdentity]:
    """``rows`` with ``model_differs`` set on those whose answer model (name and arguments) is
    not the one most of them use (the first-seen among equally common ones); none flagged
    when they all share one."""
    counts = Counter(row.answer_model for row in rows)
    if len(counts) <= 1:
        return [row.model_copy(update={"model_differs": False}) for row in rows]
    reference = max(counts, key=lambda key: counts[key])  # first-seen wins a tie
    return [row.model_copy(update={"model_differs": row.answer_model != reference})
            for row in rows]


def model_note(rows: Sequence[RunIdentity]) -> str | None:
    """The note under a table with flagged rows: which answer model the others use and what
    the flag means; ``None`` when no row is flagged."""
    flagged = [row for row in rows if row.model_differs]
    if not flagged:
        return None
    reference = next(row.answer_model for row in rows if not row.model_differs)
    return (f"{FLAG} answer model other than the one most rows use ({reference}): "
            f"{', '.join(f'{row.system} ({row.answer_model})' for row in flagged)}. A "
            "difference between these rows and the others is not their memories' alone.")
