"""The eval-log contract: what m3kit writes into an inspect eval log and reads back from it.

A solver writes, into each sample's metadata, the whole ``Question`` (``QUESTION_KEY``), the
memory key it is asked of (``MEMORY_KEY``), where its relative media paths resolve
(``MEDIA_ROOT_KEY``) and its ``SampleRecord`` (``RECORD_KEY``: frames shown, usage, timings,
failure). A benchmark's scorer writes one typed per-item record (a ``ScoreItem`` subclass
defined in the benchmark's folder) as the score's metadata. A task writes its settings as task
metadata (``BENCHMARK_KEY``, ``BLIND_KEY``, ``MEMORY_NAME_KEY``, ``SKIPPED_KEY``, and the
settings a benchmark's report labels runs by: ``FRAMES_KEY``, ``REGIME_KEY``...).

``LoggedSample`` is one sample of a log as m3kit reads it back (``m3kit.report.logs`` builds
it from an inspect ``EvalLog``); every table is computed from these records, never from the
log's raw dictionaries.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from statistics import fmean
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny

from m3kit.schema.card import ReproCard
from m3kit.schema.prediction import Usage
from m3kit.schema.question import Question
from m3kit.schema.skipped import SkippedRecord

__all__ = [
    "BENCHMARK_KEY",
    "BLIND_KEY",
    "FJ_RULE_KEY",
    "FPS_KEY",
    "FRAMES_KEY",
    "MEDIA_FAILURE",
    "MEDIA_ROOT_KEY",
    "MEMORY_KEY",
    "MEMORY_NAME_KEY",
    "QUESTION_KEY",
    "REASONING_KEY",
    "RECORD_KEY",
    "REGIME_CONFIG_KEY",
    "REGIME_KEY",
    "SKIPPED_KEY",
    "SUBTITLES_KEY",
    "LoggedRun",
    "LoggedSample",
    "SampleRecord",
    "ScoreItem",
    "ScoreStatus",
    "answered",
    "attachment_item_id",
    "mean_cost",
    "read_record",
    "round_of",
    "sample_question",
]

# -- sample metadata ---------------------------------------------------------------------------

QUESTION_KEY = "question"  # the ``Question`` the sample was built from (JSON)
RECORD_KEY = "m3kit"  # the ``SampleRecord`` of the solver
MEMORY_KEY = "memory_key"  # the memory a question is asked of (one index per key)
MEDIA_ROOT_KEY = "media_root"  # where the question's relative media paths resolve

# -- task metadata -----------------------------------------------------------------------------

BENCHMARK_KEY = "m3kit_benchmark"  # the benchmark (or data set) a task ran
BLIND_KEY = "m3kit_blind"  # a run without frames or subtitles: language priors alone
MEMORY_NAME_KEY = "m3kit_memory"  # the memory the task answered through, if any
SKIPPED_KEY = "m3kit_skipped"  # the loader's skipped records, one reason each
FRAMES_KEY = "m3kit_frames"  # the frame policy shown to the model (a count, or "<fps> fps")
FPS_KEY = "m3kit_fps"  # the sampling rate frames were taken at, if one was set
SUBTITLES_KEY = "m3kit_subtitles"  # how subtitles were given (Video-MME-v2: none, ...)
REASONING_KEY = "m3kit_reasoning"  # whether the model was asked to reason before answering
REGIME_KEY = "m3kit_regime"  # what the model saw of the conversation (M3Exam: oracle, ...)
REGIME_CONFIG_KEY = "m3kit_regime_config"  # that regime's limits, as a record
FJ_RULE_KEY = "m3kit_fj_rule"  # how fj items were scored: ``exact`` or ``letter``

# The start of the failure reason solvers give a sample whose media could not be read. M3Eval
# leaves such samples out of every denominator (its harness scores them ``None``) and reports
# how many: *excluded*, not failed; Video-MME-v2 excludes the sample's group. A model or memory
# error is a failure and counts wrong.
MEDIA_FAILURE = "media:"
# The start of the failure reason of a sample whose inputs could not be built for any other
# reason (an exception no loader check caught): that sample fails and counts wrong, the run
# and the other samples go on.
INPUTS_FAILURE = "inputs:"

# -- item ids ----------------------------------------------------------------------------------


def attachment_item_id(round_id: str, name: str) -> str:
    """The id of an attachment of a conversation round as memories store and report it:
    ``<round>/<name>`` (``D3:2/img_7``)."""
    return f"{round_id}/{name}"


def round_of(item_id: str) -> str:
    """The round an event or item id belongs to: attachment ids are ``<round>/<name>``
    (``D3:2/img_7`` -> ``D3:2``), a round's own id is the round."""
    return item_id.split("/", 1)[0]


# -- the solver's record -----------------------------------------------------------------------


class SampleRecord(BaseModel):
    """The solver's account of one sample.

    ``failure`` is set when no answer could be had (the model call failed after its retries, the
    memory reported an error, the media could not be read): the scorer counts the sample wrong.
    ``seconds`` splits the solver's time: ``frames`` (selection and decoding), ``ingest``
    (memory index building, first sample of a key only), ``answer`` (the model call or the
    memory's answer). ``skipped``: what the memory's ingest of the sample's key left out (an
    attachment damaged or over the pixel bound), recorded by the sample that built the index;
    answering directly, the attachments the pixel bound kept out of the sample's message.
    """

    frames: list[str] = Field(default_factory=list)
    frame_times: list[float] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    failure: str | None = None
    memory: str | None = None
    seconds: dict[str, float] = Field(default_factory=dict)
    skipped: list[SkippedRecord] = Field(default_factory=list)


def read_record(metadata: Mapping[str, Any] | None) -> SampleRecord | None:
    """The record stored in a sample's metadata, or ``None`` when the solver wrote none."""
    raw = (metadata or {}).get(RECORD_KEY)
    return SampleRecord.model_validate(raw) if raw is not None else None


def sample_question(metadata: Mapping[str, Any]) -> Question:
    """The ``Question`` a sample (or a task state) was built from."""
    return Question.model_validate(metadata[QUESTION_KEY])


# -- per-item scores ---------------------------------------------------------------------------

ScoreStatus = Literal["correct", "incorrect", "invalid", "failed"]

class ScoreItem(BaseModel):
    """The base of every benchmark's per-item score record, stored as the score's metadata.

    ``status``: ``correct``, ``incorrect``, ``invalid`` (not stated in the required form) or
    ``failed`` (no answer was had); ``groups``: the labels tables group by; ``id``: the
    question's id where the record travels without its sample (a run's items for intervals and
    paired comparisons; a scorer leaves it unset, the sample carries the id);
    ``judge_failure``: why a model judge gave the item no usable verdict (its reply stated no
    level, or the call failed), the judge's score then counting 0 as the papers count it.
    """

    model_config = ConfigDict(extra="ignore")

    status: ScoreStatus
    groups: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None
    judge_failure: str | None = None

    def to_metadata(self) -> dict[str, Any]:
        """The record as a score's metadata (JSON values; ``id`` and ``judge_failure`` only
        where set)."""
        data = self.model_dump(mode="json")
        for key in ("id", "judge_failure"):
            if data.get(key) is None:
                data.pop(key, None)
        return data

    def parsed_answer(self) -> str | None:
        """The answer the scorer read from the reply (a multiple-choice letter), where the
        benchmark parses one; ``None`` where the reply is scored whole."""
        return None

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any] | None) -> Self | None:
        """The record a score's metadata holds, or ``None`` when it holds none of this kind
        (a score without a status: another scorer's, or a log written before the record)."""
        if not metadata or "status" not in metadata:
            return None
        return cls.model_validate(dict(metadata))


class LoggedSample(BaseModel):
    """One sample of an eval log as m3kit reads it back.

    ``error``: inspect's own error for the sample (an exception the solver did not catch), on one
    line; ``failure``: the solver's recorded failure; ``answer``: the answer the scorer
    recorded (M3Eval's parsed letter, M3Exam's reply); ``completion``: the model's reply as it
    came (``None`` where the sample got none); ``item``: the benchmark's score record
    (``None`` when the sample has no score of the benchmark's scorer). A sample is *excluded*
    when its media could not be read, *failed* when it got no answer for another reason.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    epoch: int = 1
    question: Question | None = None
    memory_key: str | None = None
    error: str | None = None
    failure: str | None = None
    explanation: str | None = None
    answer: str | None = None
    completion: str | None = None
    item: SerializeAsAny[ScoreItem] | None = None  # the benchmark's ScoreItem subclass
    usage: Usage = Field(default_factory=Usage)
    seconds: dict[str, float] = Field(default_factory=dict)
    total_seconds: float | None = None

    @property
    def reason(self) -> str:
        """Why the sample failed (inspect's error, else the solver's failure, else the score's
        explanation); empty when it did not."""
        return self.error or self.failure or self.explanation or ""

    @property
    def excluded(self) -> bool:
        """Whether the sample's media could not be read (left out of every rate)."""
        return (self.status == "failed" and self.error is None
                and self.reason.startswith(MEDIA_FAILURE))

    @property
    def status(self) -> ScoreStatus:
        """The item's status; ``failed`` for a sample inspect recorded as errored or without a
        score record."""
        if self.error is not None or self.item is None:
            return "failed"
        return self.item.status

    @property
    def failed(self) -> bool:
        """No answer was had (excluded samples included: see ``excluded``)."""
        return self.status == "failed"

    @property
    def answered(self) -> bool:
        """The sample got a reply: neither excluded nor failed."""
        return not self.failed


class LoggedRun(BaseModel):
    """One eval log as m3kit reads it back: the run's header and its samples.

    ``task`` is the task's own name (no registry prefix); ``task_args`` the arguments it ran
    with and ``metadata`` the task's metadata (the keys above: ``BLIND_KEY``...), both as
    inspect recorded them; ``started`` orders runs of one system (ISO text); ``card``: how the
    run was made (``m3kit.schema.card.ReproCard``; ``None`` for a task that records none);
    ``wall_seconds``: the run's elapsed time, start to finish (``None`` when the log does not
    say): what a question costs in time is this over the questions, since samples run
    concurrently and each one's own time includes its waits. ``variant``: what sets the run
    apart from other runs reported beside it under the same model label (``frames 96
    uniform``; set by ``m3kit.report`` when it pools logs, empty when nothing does): a row is
    one model with one setting, and its label says which (``labelled``). ``parts``: for a run
    pooled from the logs of several tasks (one system's four M3Eval paradigms), each task's
    run read alone (its header, card and samples), in first-seen order; empty for a run of one
    task (``tasks``): a task's settings (frames, arguments, prompt) and a number that rests on
    one task's items are that task's, not the latest log's.
    """

    model_config = ConfigDict(frozen=True)

    task: str
    model: str
    status: str
    location: str = ""
    started: str = ""
    wall_seconds: float | None = None
    task_args: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)
    samples: list[LoggedSample] = Field(default_factory=list)
    card: ReproCard | None = None
    variant: str = ""
    parts: list[LoggedRun] = Field(default_factory=list)

    @property
    def blind(self) -> bool:
        return bool(self.metadata.get(BLIND_KEY))

    def tasks(self) -> list[LoggedRun]:
        """The run of each task this run holds: its ``parts``, or the run itself."""
        return list(self.parts) or [self]

    def labelled(self, label: str) -> str:
        """``label`` with the run's ``variant`` appended (``<label> · frames 96 uniform``)."""
        return f"{label} · {self.variant}" if self.variant else label


def answered(samples: Sequence[LoggedSample]) -> list[LoggedSample]:
    """The samples that got a reply: neither excluded (unreadable media) nor failed. Costs
    (tokens in, images) are averaged over these, so a run with dead videos or a dropped server
    does not look cheaper per question than it is."""
    return [s for s in samples if s.answered]


def mean_cost(samples: Sequence[LoggedSample]) -> tuple[float, float]:
    """Mean prompt tokens and mean images over ``answered(samples)`` (NaN when none)."""
    replied = answered(samples)
    if not replied:
        return math.nan, math.nan
    return (fmean(s.usage.prompt_tokens for s in replied),
            fmean(s.usage.images_sent for s in replied))
