"""VideoAgent's prompts and how its structured replies are read.

The wording follows the released code (``wxh1996/VideoAgent``, ``main.py``: ``self_eval`` and
``generate_description_step``), with m3kit's frames in place of a video's 1 fps frames. Replies
are read leniently, as the release's ``parse_json`` does: the first JSON object in the text (in a
fence or not, single quotes tolerated); a reply with none, or without a usable value, is *not
parsed* (``None``), and the caller counts it.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from m3kit.memory.prompt import json_object

CONFIDENT = 3  # "Sufficient Information": the loop stops

SELF_EVAL_PROMPT = """Please assess the confidence level in the decision-making process.
The provided information is as follows:
{information}
The decision-making process is as follows:
{answer}
Criteria for Evaluation:
Insufficient Information (Confidence Level: 1): If information is too lacking for a reasonable \
conclusion.
Partial Information (Confidence Level: 2): If information partially supports an informed guess.
Sufficient Information (Confidence Level: 3): If information fully supports a well-informed \
decision.
Assessment Focus:
Evaluate based on the relevance, completeness, and clarity of the provided information in \
relation to the decision-making context.
Reply with one JSON object and nothing else: {{"confidence": <1, 2 or 3>}}"""

QUERIES_PROMPT = """{information}
To answer the following question:
```
{question}
```
However, the information in the sampled frames is not sufficient.
Objective:
Our goal is to identify additional frames that contain crucial information necessary for \
answering the question. These frames should not only address the query directly but should \
also complement the insights gleaned from the descriptions of the sampled frames.
To achieve this, we will:
1. Divide the recording into segments at the sampled frames; candidate segments:
{segments}
2. Determine which segments are likely to contain frames that are most relevant to the \
question. These frames should capture key visual elements, such as objects, humans, \
interactions, actions, text and scenes, or words heard, that are supportive to answer the \
question.
For each frame identified as potentially relevant, provide a concise description focusing on \
essential visual elements. Use a single sentence per frame. If the specifics of a segment's \
content are uncertain based on the current information, use placeholders for specific actions \
or objects, but ensure the description still conveys the segment's relevance to the query.
Select multiple frames from one segment if necessary to gather comprehensive insights.
Reply with one JSON object and nothing else; "segment_id" is one of the candidate segments' \
numbers:
{{"frame_descriptions": [{{"segment_id": 1, "description": "frame of ..."}}, ...]}}"""


class FrameQuery(BaseModel):
    """One frame the model asks for: a description to look for inside a candidate segment
    (1-based, as the prompt numbers them)."""

    model_config = ConfigDict(frozen=True)

    segment: int
    description: str


def parse_confidence(text: str) -> int | None:
    """The reply's ``confidence`` (1, 2 or 3; ``"2"`` and ``2.0`` read as 2), else ``None``."""
    found = json_object(text)
    value = found.get("confidence") if found else None
    try:
        level = int(float(str(value).strip()))
    except (ValueError, OverflowError):  # not a number; infinity
        return None
    return level if 1 <= level <= CONFIDENT else None


def parse_queries(text: str, segments: int) -> list[FrameQuery] | None:
    """The frames the reply asks for, in its order: each entry of ``frame_descriptions`` with a
    candidate segment's number (1..``segments``) and a description; entries without them are
    dropped. ``None`` when the reply holds no such list, or none of its entries is usable."""
    found = json_object(text)
    entries = found.get("frame_descriptions") if found else None
    if not isinstance(entries, list):
        return None
    queries: list[FrameQuery] = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        description = str(entry.get("description") or "").strip()
        try:
            segment = int(str(entry.get("segment_id")).strip())
        except ValueError:
            continue
        if description and 1 <= segment <= segments:
            queries.append(FrameQuery(segment=segment, description=description))
    return queries or None


def segment_lines(spans: Sequence[tuple[str, str, int]]) -> str:
    """The candidate segments as the queries prompt lists them: ``n: from - to (k moments)``."""
    return "\n".join(f"{n}: {start} - {end} ({inside} moments)"
                     for n, (start, end, inside) in enumerate(spans, start=1))
