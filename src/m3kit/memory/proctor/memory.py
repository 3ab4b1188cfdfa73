"""``proctor``: M3Proctor, the modality-aware memory of M3Exam (paper §3).

Build: text-surrogate chunks per round with modality tags and raw references, plus a summary
chunk per session (``surrogates.build_chunks``), embedded into a vector index of the key.

Answer:

1. bias — one model call for the question's modality bias, cached per (model, question); the
   deterministic ``lexical_bias`` when the reply is not JSON (the offline model's case);
2. retrieve (``retrieve``) a pool of ``top_k * over_fetch`` chunks (the paper: by cosine; here
   by the hybrid first stage, BM25 + dense fused, ``IndexedMemory``), re-rank with α_m
   bonuses, keep ``top_k`` with a session summary and more than one session; then the evidence
   refines the bias (``bias.evidence_bias``): a question asking for a value whose best-ranked
   round carries an image or chart with no number in its surrogates needs that visual (an
   m3kit addition);
3. Stage 1 — answer from the kept chunks' text surrogates only;
4. confidence test — escalate when the answer is unreliable (confidence < ``tau``) or the bias
   is unmet (a needed modality has no kept chunk, or the answer rests on none of them; for a
   question asking for a value, "rests on" means it states a number the chunk states);
5. Stage 2 — for each modality whose fused evidence clears its gate (visual 0.45, PDF 0.48),
   attach the raw images / rendered pages of the kept chunks carrying it, and answer again.

Usage sums every call (the bias call included, when it is made), ``images_sent`` counts the raw
files of Stage 2, ``raw_media_escalations`` is 1 when Stage 2 ran, ``retrieved_ids`` is step 2's
kept chunks as ``retrieve`` ranks them; the decisions are in the answer's ``metadata``.

Retrieval re-ranks by the question's bias, which the paper has a model detect. ``retrieve``
takes the bias to rank with; without one it uses the bias ``answer`` last detected for the same
question (``known_bias``), else the lexical detector's: called after ``answer``, it gives the
ranking ``answer`` used.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio

from m3kit.errors import M3kitError
from m3kit.media.image import image_available
from m3kit.media.pdf import render_pdf_page_file
from m3kit.memory.base import AnswerRequest, MemoryAnswer, MemoryEvent, MemoryItem, checked_k
from m3kit.memory.indexed import IndexedMemory
from m3kit.memory.proctor import bias as biases
from m3kit.memory.proctor import cascade, surrogates
from m3kit.memory.proctor.bias import Bias
from m3kit.memory.proctor.surrogates import BIAS_MODALITIES, Captioner, PdfPages
from m3kit.memory.prompt import PromptBuilder, ask_model
from m3kit.schema.media import ImageRef, MediaRef, PdfPageRef
from m3kit.schema.prediction import Usage

if TYPE_CHECKING:
    from m3kit.memory.retrieval.config import RetrievalConfig
    from m3kit.perception.base import TextEmbedder, TextReader

# The released code's defaults: top_k 15, over-fetch x6, α image .20 / pdf .25 /
# chart .15, gates visual .45 / PDF .48.
DEFAULT_ALPHAS: dict[str, float] = {"image": 0.20, "document": 0.25, "chart": 0.15}
DEFAULT_GATES: dict[str, float] = {"image": 0.45, "chart": 0.45, "document": 0.48}
# The builtin's calibrated "is the evidence good enough" point (m3kit.models.builtin); a model
# that reports no score is trusted unless it abstains.
DEFAULT_TAU = 0.58


class ProctorMemory(IndexedMemory):
    """M3Proctor over text-surrogate chunks; see the module doc for the steps.

    ``bias`` is ``model`` (one call to the answering model, JSON expected, lexical fallback)
    or ``lexical`` (no call). ``max_images`` / ``max_pages`` cap the raw files of Stage 2 (the
    oracle regime's caps). ``ocr`` transcribes uncaptioned and chart images at build time;
    ``captioner`` captions images shipped without a description. ``pdf_pages``: ``items`` (a
    chunk per PDF page, shown within ``page_words`` words) or ``in_round`` (every page's text
    in its round's chunk; ``surrogates``' module doc). ``retrieval``: the first stage's search
    (``IndexedMemory``).
    """

    name = "proctor"

    def __init__(
        self,
        *,
        embedder: TextEmbedder | str | None = None,
        top_k: int = 15,
        over_fetch: int = 6,
        alphas: dict[str, float] | None = None,
        gates: dict[str, float] | None = None,
        tau: float = DEFAULT_TAU,
        bias: str = "model",
        max_images: int = 10,
        max_pages: int = 30,
        ocr: bool = True,
        reader: TextReader | None = None,
        captioner: Captioner | None = None,
        page_dpi: int = 144,
        pdf_pages: PdfPages = "items",
        page_words: int = surrogates.PAGE_WORDS,
        retrieval: RetrievalConfig | None = None,
    ) -> None:
        super().__init__(embedder=embedder, reader=reader, retrieval=retrieval)
        if top_k <= 0 or over_fetch < 1:
            raise ValueError("top_k must be positive and over_fetch at least 1")
        if bias not in ("model", "lexical"):
            raise ValueError(f"bias must be 'model' or 'lexical', got {bias!r}")
        if pdf_pages not in ("items", "in_round"):
            raise ValueError(f"pdf_pages must be 'items' or 'in_round', got {pdf_pages!r}")
        if page_words < 1:
            raise ValueError(f"page_words must be positive, got {page_words}")
        self.top_k = top_k
        self.over_fetch = over_fetch
        self.alphas = {**DEFAULT_ALPHAS, **(alphas or {})}
        self.gates = {**DEFAULT_GATES, **(gates or {})}
        self.tau = tau
        self.bias_mode = bias
        self.max_images = max_images
        self.max_pages = max_pages
        self.ocr = ocr
        self.captioner = captioner
        self.page_dpi = page_dpi
        self.pdf_pages = pdf_pages
        self.page_words = page_words
        self._bias_cache: dict[tuple[str, str], tuple[Bias, Usage]] = {}
        self._known_bias: dict[str, Bias] = {}

    def config(self) -> dict[str, Any]:
        return {
            "memory": self.name,
            "top_k": self.top_k,
            "over_fetch": self.over_fetch,
            "alphas": dict(sorted(self.alphas.items())),
            "gates": dict(sorted(self.gates.items())),
            "tau": self.tau,
            "bias": self.bias_mode,
            "fusion_weights": list(cascade.FUSION_WEIGHTS),
            "max_images": self.max_images,
            "max_pages": self.max_pages,
            **({} if self.pdf_pages == "in_round" else
               {"pdf_pages": self.pdf_pages, "page_words": self.page_words}),
            **self.search_config(),
            "ocr": self.ocr_config(),
            "captioner": getattr(self.captioner, "name", None) if self.captioner else None,
        }

    async def retrieve(
        self, key: str, query: str, *, k: int | None = None, time: float | None = None,
        bias: Bias | None = None,
    ) -> list[MemoryItem]:
        """The kept chunks for ``query`` (step 2), best first, among those of ``key`` visible
        at ``time``: at most ``k`` (``None``: ``top_k``), re-ranked by ``bias`` (``None``:
        ``known_bias(query)``)."""
        return await self._kept(key, query, self.visible(key, time), checked_k(k) or self.top_k,
                                bias or self.known_bias(query))

    def known_bias(self, query: str) -> Bias:
        """The bias ``answer`` last detected for ``query`` (with ``bias="model"``), else the
        lexical detector's."""
        return self._known_bias.get(query) or biases.lexical_bias(query)

    async def _retrieve(
        self, key: str, query: str, items: list[MemoryItem], k: int | None
    ) -> list[MemoryItem]:
        return await self._kept(key, query, items, k or self.top_k, self.known_bias(query))

    async def _kept(self, key: str, query: str, visible: list[MemoryItem], k: int, bias: Bias
                    ) -> list[MemoryItem]:
        if not visible:
            return []
        chunks = {c.id: c for c in visible}
        summaries = [c.id for c in visible if surrogates.is_summary(c)]
        # The pool: the first stage (hybrid, time-scoped, reranked when a reranker is set);
        # its scores are in (0, 1] like the paper's cosine, so the α bonuses keep their scale.
        pool = await self.ranked(key, query, k * self.over_fetch, chunks)
        found = await anyio.to_thread.run_sync(
            partial(self.search, key, query, 1, summaries)) if summaries else []
        best_summary = found[0][0] if found else None
        ranked = cascade.rerank(pool, chunks, bias.vector(), self.alphas)
        kept = cascade.diversify(ranked, chunks, k, fallback_summary=best_summary)
        return [chunks[i] for i in kept]

    async def detect_bias(self, request: AnswerRequest) -> tuple[Bias, Usage]:
        """The bias of ``request.query`` and what the call cost (nothing when cached or
        lexical)."""
        if self.bias_mode == "lexical":
            return biases.lexical_bias(request.query), Usage()
        cache_key = (str(getattr(request.model, "name", request.model)), request.query)
        if cache_key in self._bias_cache:
            bias, usage = self._bias_cache[cache_key][0], Usage()
        else:
            builder = PromptBuilder()
            builder.text(biases.bias_prompt(request.query))
            answer = await ask_model(request, builder)
            bias = biases.parse_bias(answer.output) or biases.lexical_bias(
                request.query).model_copy(update={"source": "lexical-fallback"})
            self._bias_cache[cache_key] = (bias, answer.usage)
            usage = answer.usage
        self._known_bias[request.query] = bias
        return bias, usage

    # -- Memory ----------------------------------------------------------------------------------

    def _prepare(self, key: str, events: list[MemoryEvent], reader: TextReader | None
                 ) -> tuple[list[MemoryItem], list[str], list[str]]:
        chunks, skipped = surrogates.build_chunks(key, events, reader=reader,
                                                  captioner=self.captioner,
                                                  pdf_pages=self.pdf_pages,
                                                  page_words=self.page_words)
        self._skip(key, skipped)
        return chunks, [c.id for c in chunks], [surrogates.index_text(c) for c in chunks]

    async def _answer(
        self, key: str, items: list[MemoryItem], request: AnswerRequest
    ) -> MemoryAnswer:
        query = request.query
        bias, usage = await self.detect_bias(request)
        kept = await self.retrieve(key, query, time=request.time, bias=bias)
        ranked_ids = [c.id for c in kept]
        # The detector read the question; the best-ranked round shows what it rests on. Done
        # after retrieval: the re-ranking keeps the detector's bias, so recall is unchanged.
        top = next((c for c in kept if not surrogates.is_summary(c)), None)
        if top is not None:
            bias = biases.evidence_bias(bias, query, surrogates.chunk_tags(top),
                                        surrogates.visual_text(top))
        quantity = biases.asks_quantity(query)

        # Stage 1: text surrogates only.
        stage1 = await ask_model(request, self._prompt(kept, request, raw={}),
                                 retrieved_ids=ranked_ids)
        usage = usage + stage1.usage
        conf = cascade.confidence(stage1.output, stage1.provider_metadata)
        unmet = [m for m in BIAS_MODALITIES if bias.needs(m) and not cascade.grounded(
            stage1.output, [c for c in kept if m in surrogates.chunk_tags(c)],
            quantity=quantity)]
        wants = conf < self.tau or bool(unmet)

        scores = {m: round(cascade.fused_evidence(
            cascade.modality_share(kept, m), int(bias.needs(m)), biases.artifact_cue(query, m)), 4)
                  for m in BIAS_MODALITIES}
        passed = [m for m in BIAS_MODALITIES if wants and scores[m] >= self.gates[m]]
        raw = await self._raw_sources(kept, passed) if passed else {}
        metadata: dict[str, Any] = {
            "bias": bias.vector(), "bias_source": bias.source, "asks_quantity": quantity,
            "confidence": round(conf, 4),
            "unmet": unmet, "wants_escalation": wants, "fused_evidence": scores,
            "escalated_modalities": passed if raw else [], "stage1_output": stage1.output,
            "escalated": bool(raw),
        }
        final = stage1
        if raw:
            # Stage 2: the same surrogates, plus the raw files of the modalities that passed.
            final = await ask_model(request, self._prompt(kept, request, raw=raw),
                                    retrieved_ids=ranked_ids)
            usage = usage + final.usage + Usage(raw_media_escalations=1)
        usage = usage.model_copy(update={"retrieved_ids": ranked_ids})
        return MemoryAnswer(output=final.output, usage=usage,
                            error=final.error or stage1.error, metadata=metadata)

    # -- helpers ---------------------------------------------------------------------------------

    def _prompt(self, kept: Sequence[MemoryItem], request: AnswerRequest,
                raw: dict[str, list[tuple[str, ImageRef]]]) -> PromptBuilder:
        builder = PromptBuilder()
        builder.chunks("Retrieved memory, oldest first:",
                       sorted(kept, key=lambda c: (c.time is None, c.time or 0.0)), raw)
        builder.question(request.prompt, request.images)
        return builder

    async def _raw_sources(self, kept: Sequence[MemoryItem],
                           modalities: Sequence[str]) -> dict[str, list[tuple[str, ImageRef]]]:
        """The raw files of ``modalities`` in the kept chunks, best chunk first, within the
        caps; PDF pages rendered to PNG."""
        wanted = set(modalities)
        if "chart" in wanted and not any(m == "chart" for c in kept
                                         for m, _, _ in surrogates.chunk_raw(c)):
            # The chart tag is read from captions and OCR; a chart they did not recognise is
            # still one of the images: with no tagged chart kept, the images stand in.
            wanted.add("image")
        out: dict[str, list[tuple[str, ImageRef]]] = {}
        n_images = n_pages = 0
        sent: set[MediaRef] = set()  # a page kept as its own chunk and in its round: once
        for chunk in kept:
            for modality, ref, name in surrogates.chunk_raw(chunk):
                if ref in sent:
                    continue
                # A chart is an image too: an image-biased escalation may send it.
                carries = {modality, "image"} if modality == "chart" else {modality}
                if not carries & wanted:
                    continue
                if isinstance(ref, ImageRef) and n_images < self.max_images:
                    if not image_available(ref.path):
                        continue  # reported at build; the surrogate already stood in
                    out.setdefault(chunk.id, []).append((name, ref))
                    sent.add(ref)
                    n_images += 1
                elif isinstance(ref, PdfPageRef) and n_pages < self.max_pages:
                    try:
                        image = await anyio.to_thread.run_sync(partial(self._render, ref))
                    except M3kitError:
                        continue
                    out.setdefault(chunk.id, []).append((name, image))
                    sent.add(ref)
                    n_pages += 1
        return out

    def _render(self, ref: PdfPageRef) -> ImageRef:
        """The page as a PNG in the shared page cache (rendered once, written atomically)."""
        return ImageRef(path=str(render_pdf_page_file(ref.path, ref.page, dpi=self.page_dpi)))
