"""A design persona with PDF sessions: a released M3Exam persona with real PDFs attached to
rounds of new sessions, for measuring what PDF pages cost a memory (docs/benchmarks.md,
"M3Proctor on sessions with PDFs").

    python perf/pdf_persona.py --persona ../shared/data/m3exam/Alex_Veterinarian \
        --pdf /usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf \
        --pdf /usr/share/doc/libtasn1-doc/libtasn1.pdf --out /tmp/personas

writes ``<out>/<User>_WithPDFs/``: the persona's sessions, questions and timeline, its
``images/`` linked (never copied), and ``pdfs/`` holding the given files; after its last session,
one session per PDF, dated a day apart: a round that attaches every page of the PDF (the user
names the document, the assistant replies with its first sentences) and a follow-up round
linked to it the way the release links follow-ups in PDF sessions (``P<n>:<m>``: utterance m of
the n-th PDF session, so ``P<n>:1``, the first round's user turn). The persona's questions are
unchanged: the new sessions are what every question's memory must carry without being asked
about them, as a released persona's PDF sessions are for most of its questions.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import shutil
from pathlib import Path
from typing import Any

_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def first_sentences(path: Path, count: int = 2) -> str:
    """The first ``count`` sentences of a PDF's text layer (pages in order), one line."""
    import pypdfium2

    document = pypdfium2.PdfDocument(str(path))
    try:
        text = " ".join(" ".join(document[n].get_textpage().get_text_range().split())
                        for n in range(min(len(document), 3)))
    finally:
        document.close()
    return " ".join(_SENTENCE.split(text)[:count])[:600]


def pdf_sessions(pdfs: list[Path], start: int, after: dt.date) -> list[dict[str, Any]]:
    """One session per PDF: the round attaching it, then a follow-up linked by ``P<n>:1``."""
    sessions = []
    for n, pdf in enumerate(pdfs, start=1):
        sid = f"D{start + n - 1}"
        title = pdf.stem.replace("-", " ").replace("_", " ")
        sessions.append({
            "session_id": sid,
            "date": (after + dt.timedelta(days=n)).isoformat(),
            "dialogues": [
                {"round": f"{sid}:1",
                 "user": f"I'm sharing the {title} document ({pdf.name}); can you give me the "
                         "gist of it?",
                 "assistant": f"Here is how it opens: {first_sentences(pdf)}",
                 "pdf_file": [pdf.name]},
                {"round": f"{sid}:2",
                 "user": f"Thanks. I'll keep the {title} document for later reference.",
                 "assistant": "Good idea; it is worth having at hand.",
                 "is_followup": True, "followup_of": f"P{n}:1"},
            ],
        })
    return sessions


def build(persona: Path, pdfs: list[Path], out: Path) -> Path:
    user = persona.name.split("_", 1)[0]
    target = out / f"{user}_WithPDFs"
    if target.exists():
        shutil.rmtree(target)
    (target / "pdfs").mkdir(parents=True)
    sessions = json.loads((persona / "sessions.json").read_text(encoding="utf-8"))
    last = max(dt.date.fromisoformat(str(s["date"])) for s in sessions if s.get("date"))
    numbers = [int(str(s["session_id"]).lstrip("D")) for s in sessions]
    sessions += pdf_sessions(pdfs, max(numbers) + 1, last)
    (target / "sessions.json").write_text(json.dumps(sessions, indent=1), encoding="utf-8")
    shutil.copy(persona / "question.json", target / "question.json")
    for timeline in persona.glob("timeline*.json"):
        shutil.copy(timeline, target / timeline.name)
    (target / "images").symlink_to((persona / "images").resolve(), target_is_directory=True)
    for pdf in pdfs:
        shutil.copy(pdf, target / "pdfs" / pdf.name)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--persona", type=Path, required=True)
    parser.add_argument("--pdf", type=Path, action="append", required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    print(build(args.persona, args.pdf, args.out))


if __name__ == "__main__":
    main()
