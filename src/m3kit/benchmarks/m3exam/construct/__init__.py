"""M3Exam synthesis pipeline (seed 002, §2.2, Appendices A and E): persona + core event →
timeline with distractor events and a self-check → dialogue by a sliding event window with
round summaries and per-chunk / cross-chunk audits → typed, validated question bank, written
in the released persona-folder layout. A document pool of PDFs is optional: each PDF lands on
the event its text matches, that event's opening round attaches it (``pdf_file``) and the
prompts carry its text layer (bounded); mr questions can centre on it. Any backend
(``TextBackend``; ``InspectBackend`` for any inspect-ai model).

    from m3kit.benchmarks.m3exam.construct import InspectBackend, PersonaSpec, synthesize
    synthesize(spec, InspectBackend("openai-api/vllm/Qwen/Qwen2.5-7B-Instruct"), Path("out"),
               image_pool=Path("photos"), document_pool=Path("pdfs"))
"""

from m3kit.benchmarks.m3exam.construct.documents import NumberedDocument, load_document_pool
from m3kit.benchmarks.m3exam.construct.errors import SynthesisError
from m3kit.benchmarks.m3exam.construct.pipeline import (
    ProgressHook,
    SynthesisConfig,
    SynthesisResult,
    synthesize,
)
from m3kit.benchmarks.m3exam.construct.records import PersonaSpec, QuestionItem
from m3kit.models.backend import (
    BackendRequest,
    InspectBackend,
    MalformedReplyError,
    TextBackend,
    call_json,
    extract_json,
)
from m3kit.models.call_cache import CachedBackend

__all__ = [
    "BackendRequest",
    "CachedBackend",
    "InspectBackend",
    "MalformedReplyError",
    "NumberedDocument",
    "PersonaSpec",
    "ProgressHook",
    "QuestionItem",
    "SynthesisConfig",
    "SynthesisError",
    "SynthesisResult",
    "TextBackend",
    "call_json",
    "extract_json",
    "load_document_pool",
    "synthesize",
]
