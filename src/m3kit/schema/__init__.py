"""Pydantic records shared by every m3kit layer, and their JSON (de)serialisation.

This package imports nothing heavier than pydantic: no decoders, no models, no inspect-ai.
"""

from m3kit.schema.conversation import Attachment, Conversation, Round, Session
from m3kit.schema.evallog import (
    INPUTS_FAILURE,
    MEDIA_FAILURE,
    LoggedSample,
    SampleRecord,
    ScoreItem,
    ScoreStatus,
    read_record,
    round_of,
    sample_question,
)
from m3kit.schema.io import (
    iter_json_records,
    raw_problem,
    read_json_lines,
    read_json_records,
    read_json_records_lenient,
    read_jsonl,
    read_jsonl_lenient,
    read_predictions_lenient,
    write_jsonl,
)
from m3kit.schema.media import ImageRef, MediaRef, PdfPageRef, TimeSpan, VideoRef
from m3kit.schema.prediction import Prediction, Usage
from m3kit.schema.probe import (
    FrameTile,
    ProbeFrame,
    ProbeManifest,
    ProbeRecipe,
    ProbeSegment,
    ProbeSource,
)
from m3kit.schema.question import Choice, ChoiceRole, Question, QuestionGroup
from m3kit.schema.skipped import (
    NothingToScoreError,
    PredictionsCard,
    SkippedRecord,
    match_predictions,
)

__all__ = [
    "INPUTS_FAILURE",
    "MEDIA_FAILURE",
    "Attachment",
    "Choice",
    "ChoiceRole",
    "Conversation",
    "FrameTile",
    "ImageRef",
    "LoggedSample",
    "MediaRef",
    "NothingToScoreError",
    "PdfPageRef",
    "Prediction",
    "PredictionsCard",
    "ProbeFrame",
    "ProbeManifest",
    "ProbeRecipe",
    "ProbeSegment",
    "ProbeSource",
    "Question",
    "QuestionGroup",
    "Round",
    "SampleRecord",
    "ScoreItem",
    "ScoreStatus",
    "Session",
    "SkippedRecord",
    "TimeSpan",
    "Usage",
    "VideoRef",
    "iter_json_records",
    "match_predictions",
    "raw_problem",
    "read_json_lines",
    "read_json_records",
    "read_json_records_lenient",
    "read_jsonl",
    "read_jsonl_lenient",
    "read_predictions_lenient",
    "read_record",
    "round_of",
    "sample_question",
    "write_jsonl",
]
