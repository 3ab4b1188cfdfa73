"""``m3kit/builtin``: the offline default model. A text-surrogate baseline, NOT a VLM.

It never looks at pixels the way a vision-language model does. It turns a conversation into
text evidence — OCR of the images (RapidOCR), speech in audio and video items (Whisper tiny.en),
the text of the messages (history, transcripts, retrieved memory items, captions placed in the
prompt) — and answers from that text alone, with models that ship inside installed packages
(RapidOCR, Whisper tiny.en, all-MiniLM-L6-v2; optionally SmolLM2 for free-form text). It
exists so that every task, solver, scorer and report runs offline on a CPU, and as a floor:
what text surrogates alone recover from the media.

How it answers:

- multiple choice: each option gets a support score in [0, 1] (lexical + dense, see
  ``m3kit.models.scoring``); the best option wins. Ties (frequent: with no evidence every option
  scores 0) go to the option whose text ranks first under a hash of the question and the option
  text (``tie_rank``): deterministic, the same whatever letter an option carries, and spread
  evenly over the letters — never towards "A", which would make a position bias look like a
  score whenever the gold letters are uneven. When the best
  score is below ``abstain_threshold`` and the options include an abstain-like one ("Neither
  video", "None of the above", "Not mentioned", "N/A", "I don't know"), it picks that one.
  When the prompt asks for a ranking (``Ranking: B > D > A > C``, SuperMemory-VQA), the
  completion lists every option by its score, the chosen one first (an abstain option stands
  at ``abstain_threshold``).
- Yes/No: "Yes" when the question's own statement is supported at ``yes_threshold`` or above.
- free-form: the evidence unit (a line or sentence) most related to the question, verbatim;
  or, with ``generator=smollm2``, SmolLM2-135M writing a short answer from the top units.

The completion is exactly the answer in the format the prompt asks for (see
``m3kit.models.prompt``); why it chose it — every option's scores, the units used, whether it
abstained — is in ``ModelOutput.metadata["m3kit"]``. The same input always gives the same
output: there is no sampling, and temperature is ignored.

Usage: ``input_tokens`` counts the whitespace-separated words of the input messages' text
(what a text model would read; OCR and speech transcripts are internal work and not counted;
images cost no tokens here, their number is ``metadata["m3kit"]["images"]``);
``output_tokens`` counts the words of the completion.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import tempfile
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import anyio
from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    StopReason,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from m3kit.errors import CorruptMediaError, MediaError, MediaNotFoundError
from m3kit.models.content import content_text, image_key, image_refs, load_rgb, media_refs
from m3kit.models.errors import ModelArgError
from m3kit.models.evidence import EvidenceUnit, dedupe, split_units
from m3kit.models.prompt import (
    FormatKind,
    Option,
    ParsedPrompt,
    is_instruction,
    parse_prompt,
)
from m3kit.models.scoring import EvidenceScorer, Support
from m3kit.perception.base import SpeechRecognizer, TextEmbedder, TextReader

# ``m3kit.models.calibration.calibrate_default(n=48, seed=0)`` with the default scorer gives
# 0.5794 (answerable best scores >= 0.68, unanswerable <= 0.48 there; seeds 1 and 2 at n=96 give
# 0.562 and 0.565); tests/models/test_calibration.py re-runs it.
DEFAULT_ABSTAIN_THRESHOLD = 0.58
GENERATORS = ("span", "smollm2")


class BuiltinModelAPI(ModelAPI):
    """The offline text-surrogate baseline behind ``m3kit/builtin`` (not a VLM; see module doc).

    Model args (``-M name=value``):

    - ``abstain_threshold`` (float, default 0.58, see ``m3kit.models.calibration``): below
      it, an abstain option is chosen;
    - ``yes_threshold`` (float, default = ``abstain_threshold``): support needed for "Yes";
    - ``lexical_weight`` (float in [0, 1], default 0.5): lexical vs dense share of a score;
    - ``ocr`` (bool, default true): read text in the images;
    - ``ocr_min_score`` (float, default 0.5): drop OCR lines RapidOCR is less sure of;
    - ``max_images`` (int, default 64): OCR at most this many images, the latest ones;
    - ``speech`` (bool, default true): transcribe audio and video items in the messages;
    - ``generator`` (``span`` | ``smollm2``, default ``span``): how free-form answers are made;
    - ``top_evidence`` (int, default 3): evidence units reported (and given to SmolLM2).
    """

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig | None = None,
        *,
        abstain_threshold: float | str = DEFAULT_ABSTAIN_THRESHOLD,
        yes_threshold: float | str | None = None,
        lexical_weight: float | str = 0.5,
        ocr: bool | str = True,
        ocr_min_score: float | str = 0.5,
        max_images: int | str = 64,
        speech: bool | str = True,
        generator: str = "span",
        top_evidence: int | str = 3,
        reader: TextReader | None = None,
        embedder: TextEmbedder | None = None,
        recognizer: SpeechRecognizer | None = None,
        **unknown: Any,
    ) -> None:
        super().__init__(
            model_name=model_name, base_url=base_url, api_key=api_key,
            config=config or GenerateConfig(),
        )
        if unknown:
            raise ModelArgError(
                f"unknown model args {sorted(unknown)}; known: abstain_threshold, yes_threshold, "
                "lexical_weight, ocr, ocr_min_score, max_images, speech, generator, top_evidence",
                record=f"m3kit/{model_name}",
            )
        self.abstain_threshold = _float(abstain_threshold, "abstain_threshold", 0.0, 1.0)
        self.yes_threshold = (
            self.abstain_threshold if yes_threshold is None
            else _float(yes_threshold, "yes_threshold", 0.0, 1.0)
        )
        self.ocr = _bool(ocr, "ocr")
        self.speech = _bool(speech, "speech")
        self.max_images = int(_float(max_images, "max_images", 0, 1e9))
        self.top_evidence = int(_float(top_evidence, "top_evidence", 1, 1e6))
        if generator not in GENERATORS:
            raise ModelArgError(f"generator must be one of {GENERATORS}", field="generator")
        self.generator = generator
        self._ocr_min_score = _float(ocr_min_score, "ocr_min_score", 0.0, 1.0)
        self._lexical_weight = _float(lexical_weight, "lexical_weight", 0.0, 1.0)
        self._reader = reader
        self._embedder = embedder
        self._recognizer = recognizer
        self._speech_cache: dict[str, list[str]] = {}
        self._scorer: EvidenceScorer | None = None
        self._writer: Any = None
        self._ocr_cache: dict[str, list[str]] = {}
        self._lock = threading.Lock()  # caches and models are shared by concurrent samples

    def max_connections(self) -> int:
        # CPU-bound and serialised by one lock: more connections would only queue.
        return 1

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        # OCR and embeddings block for a while: run them off the event loop.
        return await anyio.to_thread.run_sync(self.answer, input, config)

    def answer(
        self, messages: Sequence[ChatMessage], config: GenerateConfig | None = None
    ) -> ModelOutput:
        """Answer a conversation synchronously (what ``generate`` runs in a worker thread)."""
        with self._lock:
            return self._answer(list(messages), config or GenerateConfig())

    # -- the steps ---------------------------------------------------------------------------

    def _answer(self, messages: list[ChatMessage], config: GenerateConfig) -> ModelOutput:
        last_user = max((n for n, m in enumerate(messages) if m.role == "user"), default=None)
        prompt = content_text(messages[last_user].content) if last_user is not None else ""
        system = "\n".join(content_text(m.content) for m in messages if m.role == "system")
        parsed = parse_prompt(prompt, system)
        units, images, ocr_lines = self._evidence(messages, last_user, parsed)
        scorer = self._get_scorer()

        if parsed.yes_no:  # lettered or bulleted Yes/No: the question's statement decides
            answer, details = self._yes_no(parsed, units, scorer)
        elif parsed.multiple_choice:
            answer, details = self._choose(parsed, units, scorer)
        else:
            answer, details = self._free_form(parsed, units, scorer)
        stop_reason: StopReason = "stop"
        if details["mode"] == "free_form":
            # A span can be long: honour max_tokens (in words, like the usage below). A
            # free-form answer stays bare unless the prompt asked for a template.
            answer, stop_reason = _truncate(answer, config.max_tokens)
            explicit = parsed.answer_format.explicit
            completion = parsed.answer_format.render(answer) if explicit else answer
        elif parsed.answer_format.kind is FormatKind.RANKING and details["mode"] == \
                "multiple_choice":
            # every option, best first, the chosen one leading (its ranking puts an abstain
            # option at the threshold, so a tie there still leads with the decision)
            ranked = [answer, *(label for label in details["ranking"] if label != answer)]
            completion = parsed.answer_format.render(" > ".join(ranked))
        else:
            completion = parsed.answer_format.render(answer)

        input_tokens = sum(len(content_text(m.content).split()) for m in messages)
        output_tokens = len(completion.split())
        output = ModelOutput.from_content(
            model=self.model_name, content=completion, stop_reason=stop_reason
        )
        output.usage = ModelUsage(
            input_tokens=input_tokens, output_tokens=output_tokens,
            total_tokens=input_tokens + output_tokens,
        )
        output.metadata = {
            "m3kit": {
                "provider": "m3kit/builtin",
                "surrogate": "text",  # a text-surrogate baseline, not a VLM
                "question": parsed.question,
                "format": parsed.answer_format.kind.value,
                "images": images,
                "ocr_lines": ocr_lines,
                "audio_video": len(media_refs(messages)),
                "evidence_units": len(units),
                **details,
            }
        }
        return output

    def _evidence(
        self, messages: list[ChatMessage], last_user: int | None, parsed: ParsedPrompt
    ) -> tuple[list[EvidenceUnit], int, int]:
        """Text units from the history, the prompt's context lines and the images' OCR."""
        units: list[EvidenceUnit] = []
        for n, message in enumerate(messages):
            if n == last_user:
                continue
            text = content_text(message.content)
            if message.role == "system":  # the system prompt: keep content, drop instructions
                text = "\n".join(line for line in text.splitlines() if not is_instruction(line))
            units.extend(split_units(text, f"message {n} ({message.role})"))
        for line in parsed.context:
            units.extend(split_units(line, "prompt"))

        refs = image_refs(messages, roles=("user", "tool"))
        ocr_lines = 0
        if self.ocr and self.max_images > 0 and refs:
            kept = refs[-self.max_images :]
            first = len(refs) - len(kept)
            for k, lines in enumerate(self._read(kept)):
                source = f"image {first + k + 1} (OCR)"
                ocr_lines += len(lines)
                units.extend(EvidenceUnit(line, source) for line in lines)
                if len(lines) > 1:  # a statement may span lines on screen
                    units.append(EvidenceUnit(" ".join(lines), source))
        if self.speech:
            for k, (kind, ref, fmt) in enumerate(media_refs(messages, roles=("user", "tool"))):
                source = f"{kind} {k + 1} (speech)"
                units.extend(EvidenceUnit(text, source) for text in self._hear(ref, fmt))
        return dedupe(units), len(refs), ocr_lines

    def _hear(self, ref: str, fmt: str) -> list[str]:
        """Speech segments of one audio or video item, each item transcribed once."""
        key = image_key(ref)
        if key not in self._speech_cache:
            recognizer = self._get_recognizer()
            with _as_file(ref, fmt) as path:
                try:
                    segments = recognizer.transcribe(path)
                except (CorruptMediaError, MediaNotFoundError):
                    raise
                except MediaError:  # a video without a soundtrack: nothing was said
                    segments = []
            self._speech_cache[key] = [s.text for s in segments]
        return self._speech_cache[key]

    def _read(self, refs: list[str]) -> list[list[str]]:
        """OCR lines of each image, each image read once per instance."""
        keys = [image_key(ref) for ref in refs]
        todo = [(key, ref) for key, ref in dict(zip(keys, refs, strict=True)).items()
                if key not in self._ocr_cache]
        if todo:
            reader = self._get_reader()
            read = reader.read([load_rgb(ref) for _, ref in todo])
            for (key, _), lines in zip(todo, read, strict=True):
                self._ocr_cache[key] = [line.text for line in lines]
        return [self._ocr_cache[key] for key in keys]

    def _choose(
        self, parsed: ParsedPrompt, units: list[EvidenceUnit], scorer: EvidenceScorer
    ) -> tuple[str, dict[str, Any]]:
        candidates = [o for o in parsed.options if not o.abstain]
        abstainers = [o for o in parsed.options if o.abstain]
        supports = scorer.score_options(parsed.question, [o.text for o in candidates], units)
        scored = dict(zip((o.label for o in candidates), supports, strict=True))
        best = max(candidates, key=lambda o: (scored[o.label].score,
                                              -tie_rank(parsed.question, o.text)), default=None)
        best_score = scored[best.label].score if best is not None else 0.0
        abstained = bool(abstainers) and (best is None or best_score < self.abstain_threshold)
        chosen = abstainers[0] if abstained or best is None else best

        # One ranking over all options (SuperMemory-VQA's MRR reads it): an abstain option
        # stands at the threshold, so the ranking agrees with the decision.
        rank_score = {o.label: scored[o.label].score for o in candidates}
        rank_score.update({o.label: self.abstain_threshold for o in abstainers})
        ranking = sorted(parsed.options, key=lambda o: (-rank_score[o.label],
                                                        tie_rank(parsed.question, o.text)))
        second = sorted((s.score for s in supports), reverse=True)[1:2]
        details = {
            "mode": "multiple_choice",
            "answer": chosen.label,
            "abstained": abstained,
            "abstain_threshold": self.abstain_threshold,
            "best_score": best_score,
            "margin": round(best_score - second[0], 4) if second else best_score,
            "ranking": [o.label for o in ranking],
            "scores": [_option_row(o, scored.get(o.label)) for o in parsed.options],
            "evidence": self._top_units(parsed, units, scorer, scored.get(chosen.label)),
        }
        return chosen.label, details

    def _yes_no(
        self, parsed: ParsedPrompt, units: list[EvidenceUnit], scorer: EvidenceScorer
    ) -> tuple[str, dict[str, Any]]:
        support = scorer.statement_support(parsed.question, units)
        says_yes = support.score >= self.yes_threshold
        word = "Yes" if says_yes else "No"
        option = next((o for o in parsed.options if o.text.lower().rstrip(".") == word.lower()),
                      None)
        answer = option.label if option is not None else word
        details = {
            "mode": "yes_no",
            "answer": answer,
            "support": support.score,
            "lexical": support.lexical,
            "dense": support.dense,
            "yes_threshold": self.yes_threshold,
            "evidence": self._top_units(parsed, units, scorer, support),
        }
        return answer, details

    def _free_form(
        self, parsed: ParsedPrompt, units: list[EvidenceUnit], scorer: EvidenceScorer
    ) -> tuple[str, dict[str, Any]]:
        ranked = scorer.rank_units(parsed.question, units)
        top = ranked[: self.top_evidence]
        if self.generator == "smollm2" and top:
            answer = self._get_writer().answer(parsed.question, [u.text for u, _ in top])
        else:
            answer = top[0][0].text if top else ""
        details = {
            "mode": "free_form",
            "answer": answer,
            "generator": self.generator,
            "evidence": [
                {"text": u.text, "source": u.source, "score": score} for u, score in top
            ],
        }
        return answer, details

    def _top_units(
        self,
        parsed: ParsedPrompt,
        units: list[EvidenceUnit],
        scorer: EvidenceScorer,
        chosen: Support | None,
    ) -> list[dict[str, Any]]:
        """The units that bear on the question (the chosen option's best unit first)."""
        ranked = scorer.rank_units(parsed.question, units)[: self.top_evidence]
        rows = [{"text": u.text, "source": u.source, "score": s} for u, s in ranked]
        if chosen is not None and chosen.evidence is not None:
            rows = [r for r in rows if r["text"] != chosen.evidence]
            source = next(u.source for u in units if u.text == chosen.evidence)
            rows.insert(0, {"text": chosen.evidence, "source": source, "score": chosen.score})
        return rows[: self.top_evidence]

    # -- lazy components ---------------------------------------------------------------------

    def _get_scorer(self) -> EvidenceScorer:
        if self._scorer is None:
            if self._embedder is None:
                from m3kit.perception.embeddings import MiniLMEmbedder

                self._embedder = MiniLMEmbedder()
            self._scorer = EvidenceScorer(self._embedder, lexical_weight=self._lexical_weight)
        return self._scorer

    def _get_reader(self) -> TextReader:
        if self._reader is None:
            from m3kit.perception.cache import default_text_reader

            self._reader = default_text_reader(min_score=self._ocr_min_score)
        return self._reader

    def _get_recognizer(self) -> SpeechRecognizer:
        if self._recognizer is None:
            from m3kit.perception.speech import WhisperRecognizer

            self._recognizer = WhisperRecognizer()
        return self._recognizer

    def _get_writer(self) -> Any:
        if self._writer is None:
            from m3kit.models.smollm import SmolLM2Writer

            self._writer = SmolLM2Writer()
        return self._writer


@contextlib.contextmanager
def _as_file(ref: str, fmt: str) -> Iterator[Path]:
    """A media reference as a file path: a data URI is written to a temporary file."""
    if not ref.startswith("data:"):
        yield Path(ref)
        return
    payload = ref.split(",", 1)[1] if "," in ref else ""
    with tempfile.TemporaryDirectory(prefix="m3kit-media-") as folder:
        path = Path(folder) / f"media.{fmt}"
        path.write_bytes(base64.b64decode(payload))
        yield path


def tie_rank(question: str, option_text: str) -> int:
    """Where an option stands among options of equal score (lower first): the first 8 bytes of
    sha256 over the question and the option's text. Not the letter: the same question with its
    options in another order picks the same option, and over many questions the pick lands on
    every letter alike."""
    digest = hashlib.sha256(f"{question}\x00{option_text}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _option_row(option: Option, support: Support | None) -> dict[str, Any]:
    row: dict[str, Any] = {"label": option.label, "text": option.text, "abstain": option.abstain}
    if support is not None:
        row.update(score=support.score, lexical=support.lexical, dense=support.dense,
                   evidence=support.evidence)
    return row


def _truncate(text: str, max_tokens: int | None) -> tuple[str, StopReason]:
    """The first ``max_tokens`` words of ``text``, and the stop reason."""
    words = text.split()
    if max_tokens is not None and 0 < max_tokens < len(words):
        return " ".join(words[:max_tokens]), "max_tokens"
    return text, "stop"


def _float(value: float | str, name: str, low: float, high: float) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError) as error:
        raise ModelArgError(f"{value!r} is not a number", field=name) from error
    if not low <= number <= high:
        raise ModelArgError(f"{number} is outside [{low:g}, {high:g}]", field=name)
    return number


def _bool(value: bool | str | int, name: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ModelArgError(f"{value!r} is not a boolean", field=name)
