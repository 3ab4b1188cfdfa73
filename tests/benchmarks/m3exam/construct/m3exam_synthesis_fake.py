"""A scripted backend for the synthesis tests: replays scripted responses per stage (or per
``stage@item``), and otherwise answers like a well-behaved model, reading what it needs (counts,
dates, round ids, image ids, numbers on document pages) from the prompt as a real model would.

Loaded by path through the ``fake`` / ``scripted`` fixtures of ``conftest.py``."""

from __future__ import annotations

import json
import re
from datetime import date, timedelta

from m3kit.benchmarks.m3exam.construct import BackendRequest


class ScriptedBackend:
    name = "scripted"

    def __init__(self, script: dict[str, list[str]] | None = None) -> None:
        self.script = {k: list(v) for k, v in (script or {}).items()}
        self.calls: list[BackendRequest] = []

    def complete(self, request: BackendRequest) -> str:
        self.calls.append(request)
        for key in (f"{request.stage}@{request.item}", request.stage):
            if self.script.get(key):
                return self.script[key].pop(0)
        return good_response(request)

    def stages(self) -> list[str]:
        return [c.stage for c in self.calls]


def _event(desc: str, day: date) -> dict[str, str]:
    return {"description": desc, "query": f"shares photos and asks about {desc.lower()}",
            "date": day.isoformat(), "keyword": desc.lower()}


def good_response(request: BackendRequest) -> str:
    p, item = request.prompt, request.item
    stage = request.stage
    if stage == "timeline.core":
        n = int(re.search(r"Write (\d+) chronologically", p).group(1))
        start = date.fromisoformat(re.search(r"starting on (\S+)\.", p).group(1))
        return json.dumps([_event(f"Core case {i} with a sick cat", start + timedelta(days=2 * i))
                           for i in range(n)])
    if stage == "timeline.distractors":
        n = int(re.search(r"Write (\d+) side events", p).group(1))
        first = date.fromisoformat(re.search(r"dated between (\S+) and", p).group(1))
        return "Here you go:\n```json\n" + json.dumps(
            [_event(f"Side errand {i} buying snacks", first + timedelta(days=2 * i + 1))
             for i in range(n)]) + "\n```"
    if stage == "timeline.repair":
        low = re.search(r"stay between (\S+) and", p).group(1)
        return json.dumps(_event(f"Repaired event {item}", date.fromisoformat(low)))
    if stage in ("timeline.self_check", "dialogue.chunk_audit", "dialogue.cross_audit"):
        return '{"flags": []}'
    if stage == "images.caption":
        return json.dumps({"description": f"A photo named {item} of a sick cat"})
    if stage == "dialogue.user":
        if "Text of the pages of" in p:  # a document round: quote a number from the pages
            quoted = _numbers(p.split("Text of the pages of", 1)[1])[0]
            return json.dumps({"user": f"Round {item}: the report says {quoted}; is that "
                                       "worrying?", "is_followup": False})
        return json.dumps({"user": f"Question of round {item}: how do I treat this cat?",
                           "is_followup": False})
    if stage == "dialogue.assistant":
        return f"Advice for round {item}: give fluids, monitor closely, recheck in a week."
    if stage == "dialogue.summary":
        return json.dumps({"summary": f"Round {item} discussed treating a cat."})
    if stage == "dialogue.repair":
        return json.dumps({"user": f"Repaired question {item}", "assistant": "Repaired reply."})
    if stage.startswith("questions."):
        return json.dumps(good_questions(stage.split(".")[1], p, item))
    raise AssertionError(f"unscripted stage {stage}")


_NUMBER = re.compile(r"\d+(?:\.\d+)?\s*(?:mg/kg|mmol/L|kg|days|%)")


def _numbers(text: str) -> list[str]:
    return _NUMBER.findall(text)


def window_rounds(prompt: str) -> list[tuple[str, list[int]]]:
    """(round id, image ids) for each round of a question prompt's excerpt."""
    return [(r, imgs) for r, imgs, _ in _parse_window(prompt)]


def _parse_window(prompt: str) -> list[tuple[str, list[int], list[str]]]:
    """(round id, image ids, text lines of its documents) per round of the excerpt."""
    rounds: list[tuple[str, list[int], list[str]]] = []
    for line in prompt.split("\nTask (")[0].splitlines():
        if m := re.match(r"\[(D\d+:\d+)\] User:", line):
            rounds.append((m.group(1), [], []))
        elif m := re.match(r"\s+Attached img_(\d+)", line):
            rounds[-1][1].append(int(m.group(1)))
        elif line.startswith("    ") and rounds:
            rounds[-1][2].append(line.strip())
    return rounds


def _dialogue_text(prompt: str) -> str:
    excerpt = prompt.split("\nTask (")[0]
    return "\n".join(line for line in excerpt.splitlines()
                     if re.match(r"(\[D\d+:\d+\] User:|Assistant:)", line))


def good_questions(qtype: str, prompt: str, item: str) -> list[dict[str, object]]:
    n = int(re.search(r"Write (\d+) item", prompt).group(1))
    rounds = window_rounds(prompt)
    ids = [r for r, _ in rounds]
    by_session: dict[str, str] = {}
    for r in ids:
        by_session.setdefault(r.split(":")[0], r)
    out = []
    for k in range(n):
        q = f"{qtype} question {k} over window {item}?"
        if qtype in ("ss", "tr"):
            answer, facts = ["2023-10-10", "October 2023"], [ids[k % len(ids)]]
        elif qtype in ("ms", "ii"):
            answer, facts = ["lead clinician", "clinician"], list(by_session.values())[:2]
        elif qtype == "th":
            answer, facts = ["fluids, monitoring and recheck", "fluids"], [ids[0]]
        elif qtype == "mr":
            focus = re.search(r"Focus: the document attached to round (D\d+:\d+)", prompt)
            if focus:  # read a number off the pages that the dialogue never stated
                docs = {r: lines for r, _, lines in _parse_window(prompt)}
                said = _dialogue_text(prompt)
                numbers = _numbers("\n".join(docs[focus.group(1)]))
                # nothing left unsaid: answer a said one, as a weak model would (rejected)
                unsaid = [n for n in numbers if n not in said] or numbers
                answer, facts = [unsaid[k % len(unsaid)]], [focus.group(1)]
                q = f"Per the document in {focus.group(1)}, what value is listed ({item}, {k})?"
            else:
                with_img = [r for r, imgs in rounds if imgs]
                answer, facts = ["a blue collar"], [with_img[0]]
        elif qtype == "fm":
            r, imgs = next((r, imgs) for r, imgs in rounds if len(imgs) >= 2)
            answer, facts = [f"img_{imgs[k % 2]}", f"img_{imgs[(k + 1) % 2]}"], [r]
            q = f"Which image shows thing {k} in window {item}? Return the file name."
        else:  # fj
            answer, facts = ["C"], [ids[0]]
            q = f"Which was advised in {item} ({k})? (A) x (B) y (C) z (D) w"
        out.append({"question": q, "answer": answer, "supporting_facts": facts})
    return out
