"""How a frame is resized before it is used or stored."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from m3kit.errors import MediaRequestError


class Resize(BaseModel):
    """A resize request.

    ``width`` and ``height`` both set: that exact size. One of them set: that side, the other
    following the aspect ratio. ``max_side``: shrink (never enlarge) so the longer side fits.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    width: int | None = Field(default=None, gt=0)
    height: int | None = Field(default=None, gt=0)
    max_side: int | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _one_rule(self) -> Resize:
        if self.max_side is not None and (self.width is not None or self.height is not None):
            raise ValueError("give either max_side or width/height, not both")
        return self

    @property
    def key(self) -> str:
        """A stable text form, part of frame-store keys."""
        return f"w{self.width or 0}h{self.height or 0}m{self.max_side or 0}"

    def size_for(self, width: int, height: int) -> tuple[int, int]:
        """The output size for a ``width`` × ``height`` input."""
        if self.width is not None and self.height is not None:
            return self.width, self.height
        if self.width is not None:
            return self.width, max(1, round(height * self.width / width))
        if self.height is not None:
            return max(1, round(width * self.height / height)), self.height
        if self.max_side is not None and max(width, height) > self.max_side:
            scale = self.max_side / max(width, height)
            return max(1, round(width * scale)), max(1, round(height * scale))
        return width, height


def resize_for(
    *, max_side: int | None = None, width: int | None = None, height: int | None = None
) -> Resize | None:
    """The ``Resize`` for command-line style arguments (None: keep the size), or a
    ``MediaRequestError`` naming the bad field: every verb refuses a size of 0 or less alike."""
    if max_side is None and width is None and height is None:
        return None
    try:
        return Resize(max_side=max_side, width=width, height=height)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = str(error["loc"][0]) if error["loc"] else None
        value = {"max_side": max_side, "width": width, "height": height}.get(field or "")
        if error["type"] == "greater_than":
            reason = f"must be a positive number of pixels, got {value}"
        else:
            reason = str(error["msg"]).removeprefix("Value error, ")
        raise MediaRequestError(reason, field=field) from None


def resize_key(resize: Resize | None) -> str:
    return "orig" if resize is None else resize.key
