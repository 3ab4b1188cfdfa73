"""M3Proctor (M3Exam paper §3): modality-aware memory that reads raw images and pages only on
demand. ``ProctorMemory`` is the memory; the other names are its parts, public for tests and
for the hierarchical memory, which shares the chunking.
"""

from m3kit.memory.proctor.bias import (
    Bias,
    artifact_cue,
    asks_quantity,
    bias_prompt,
    evidence_bias,
    lexical_bias,
    parse_bias,
)
from m3kit.memory.proctor.cascade import (
    FUSION_WEIGHTS,
    confidence,
    diversify,
    fused_evidence,
    grounded,
    modality_share,
    rerank,
)
from m3kit.memory.proctor.memory import (
    DEFAULT_ALPHAS,
    DEFAULT_GATES,
    DEFAULT_TAU,
    ProctorMemory,
)
from m3kit.memory.proctor.surrogates import (
    BIAS_MODALITIES,
    SUMMARY_PREFIX,
    build_chunks,
    chunk_raw,
    chunk_tags,
    first_sentence,
    index_text,
    is_chart,
    is_page,
    is_summary,
    session_summary,
    visual_text,
)
from m3kit.schema.evallog import round_of

__all__ = [
    "BIAS_MODALITIES",
    "DEFAULT_ALPHAS",
    "DEFAULT_GATES",
    "DEFAULT_TAU",
    "FUSION_WEIGHTS",
    "SUMMARY_PREFIX",
    "Bias",
    "ProctorMemory",
    "artifact_cue",
    "asks_quantity",
    "bias_prompt",
    "build_chunks",
    "chunk_raw",
    "chunk_tags",
    "confidence",
    "diversify",
    "evidence_bias",
    "first_sentence",
    "fused_evidence",
    "grounded",
    "index_text",
    "is_chart",
    "is_page",
    "is_summary",
    "lexical_bias",
    "modality_share",
    "parse_bias",
    "rerank",
    "round_of",
    "session_summary",
    "visual_text",
]
