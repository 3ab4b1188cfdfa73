"""Perception: OCR, speech transcripts, text embeddings and captions behind small protocols.

Each default is lazy (nothing loads until first use) and offline (its model ships in a package).
"""

from m3kit.perception.base import (
    Captioner,
    SpeechRecognizer,
    TextEmbedder,
    TextLine,
    TextReader,
    TokenEmbedder,
    TranscriptSegment,
)
from m3kit.perception.cache import CachedTextReader
from m3kit.perception.embeddings import MiniLMEmbedder
from m3kit.perception.ocr import RapidTextReader
from m3kit.perception.speech import WhisperRecognizer

__all__ = [
    "CachedTextReader",
    "Captioner",
    "MiniLMEmbedder",
    "RapidTextReader",
    "SpeechRecognizer",
    "TextEmbedder",
    "TextLine",
    "TextReader",
    "TokenEmbedder",
    "TranscriptSegment",
    "WhisperRecognizer",
]
