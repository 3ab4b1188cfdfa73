"""Pure metric functions: answer parsing, accuracy, intrusion rate, group scores. No I/O."""

from m3kit.metrics.accuracy import (
    AnswerStatus,
    ScoredAnswer,
    Summary,
    accuracy,
    group_by,
    intrusion_rate,
    summarize,
    summarize_by,
)
from m3kit.metrics.answers import ParsedAnswer, parse_choice, parse_yes_no

__all__ = [
    "AnswerStatus",
    "ParsedAnswer",
    "ScoredAnswer",
    "Summary",
    "accuracy",
    "group_by",
    "intrusion_rate",
    "parse_choice",
    "parse_yes_no",
    "summarize",
    "summarize_by",
]
