"""Multi-session conversations: a conversation holds sessions, a session holds rounds, a round
holds the user's turn, the assistant's reply and the media the user attached (M3Exam).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from m3kit.schema.media import MediaRef

__all__ = ["Attachment", "Conversation", "Round", "Session"]

_RECORD = ConfigDict(extra="forbid", frozen=True)


class Attachment(BaseModel):
    """A media item attached to a round.

    ``id`` is the name the benchmark uses for it (M3Exam ``"img_1"``, which file-matching
    questions answer with); ``description`` is the released text surrogate of the item
    (M3Exam ``img_description``), used where raw media is not sent.
    """

    model_config = _RECORD

    media: MediaRef
    description: str | None = None
    id: str | None = None


class Round(BaseModel):
    """One exchange: the user's ``text``, the assistant's ``response`` and the attachments.

    ``id`` is unique within its conversation (M3Exam ``"D1:3"``). A follow-up round names the
    round it follows up in ``followup_of``. ``attachments_description`` keeps a released
    description of the attachments taken together, for sources that do not describe each
    item (M3Exam sometimes gives one string for several images).
    """

    model_config = _RECORD

    id: str = Field(min_length=1)
    speaker: str | None = None
    text: str
    response: str | None = None
    attachments: list[Attachment] = Field(default_factory=list)
    attachments_description: str | None = None
    is_followup: bool = False
    followup_of: str | None = None
    time: datetime | None = None

    @field_validator("followup_of")
    @classmethod
    def _followup_flag(cls, followup_of: str | None, info: ValidationInfo) -> str | None:
        if followup_of is not None and info.data.get("is_followup") is False:
            raise ValueError("followup_of is set but is_followup is False")
        return followup_of


def _parse_date(raw: str) -> datetime | None:
    # Released dates are mostly ISO ("2023-03-01"); anything else stays raw-only, since a
    # date we cannot read is not a reason to reject a conversation.
    try:
        return datetime.fromisoformat(raw)
    except ValueError:
        return None


class Session(BaseModel):
    """A dated session of consecutive rounds.

    ``date`` keeps the released date string verbatim; ``parsed_date`` is filled from it when
    it is ISO 8601 (a ``datetime`` passed as ``date`` fills both).
    """

    model_config = _RECORD

    id: str = Field(min_length=1)
    date: str | None = None
    parsed_date: datetime | None = None
    rounds: list[Round] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _split_date(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        date = data.get("date")
        if isinstance(date, datetime):
            data = {**data, "date": date.isoformat()}
            data.setdefault("parsed_date", date)
        elif isinstance(date, str) and data.get("parsed_date") is None:
            parsed = _parse_date(date)
            if parsed is not None:
                data = {**data, "parsed_date": parsed}
        return data


class Conversation(BaseModel):
    """A multi-session conversation; round ids are unique across all its sessions."""

    model_config = _RECORD

    id: str = Field(min_length=1)
    speakers: list[str] = Field(default_factory=list)
    sessions: list[Session] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    # round id -> (session index, round index); built once, lookups are then O(1).
    _round_index: dict[str, tuple[int, int]] = PrivateAttr(default_factory=dict)

    @field_validator("sessions")
    @classmethod
    def _unique_ids(cls, sessions: list[Session]) -> list[Session]:
        session_ids: set[str] = set()
        seen: set[str] = set()
        for session in sessions:
            if session.id in session_ids:
                raise ValueError(f"duplicate session id {session.id!r}")
            session_ids.add(session.id)
            for rnd in session.rounds:
                if rnd.id in seen:
                    raise ValueError(f"duplicate round id {rnd.id!r} (in session {session.id!r})")
                if rnd.followup_of is not None and rnd.followup_of not in seen:
                    raise ValueError(
                        f"round {rnd.id!r} follows up {rnd.followup_of!r}, "
                        "which is not an earlier round"
                    )
                seen.add(rnd.id)
        return sessions

    def model_post_init(self, context: Any, /) -> None:
        self._round_index = {
            rnd.id: (si, ri)
            for si, session in enumerate(self.sessions)
            for ri, rnd in enumerate(session.rounds)
        }

    def iter_rounds(self) -> Iterator[Round]:
        """All rounds in order, session after session."""
        for session in self.sessions:
            yield from session.rounds

    def round(self, round_id: str) -> Round:
        """The round with this id; ``KeyError`` if there is none."""
        si, ri = self._locate(round_id)
        return self.sessions[si].rounds[ri]

    def session(self, session_id: str) -> Session:
        """The session with this id; ``KeyError`` if there is none."""
        for session in self.sessions:
            if session.id == session_id:
                return session
        raise KeyError(f"conversation {self.id!r} has no session {session_id!r}")

    def session_of(self, round_id: str) -> Session:
        """The session that holds the round with this id; ``KeyError`` if there is none."""
        si, _ = self._locate(round_id)
        return self.sessions[si]

    def _locate(self, round_id: str) -> tuple[int, int]:
        try:
            return self._round_index[round_id]
        except KeyError:
            raise KeyError(f"conversation {self.id!r} has no round {round_id!r}") from None
