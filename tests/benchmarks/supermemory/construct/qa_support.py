"""Shared by the stage-2 tests (``conftest.py`` registers it as the module ``sm_qa_support``;
tests are not a package): a tiny synthetic egocentric suite, stage-1 captions written from its
truth (one segment per scene: label, caption and note as environment, activities and visible
text; the scene's transcript lines as audio), a release-like root, and a scripted model.

The scripted model is inspect's real ``mockllm/model`` with a callable ``custom_outputs``
choosing each reply from the prompt, so the tests run the real path (InspectBackend → inspect →
reply → parsing → checks → causality → verdict). Its planner writes, by the skill it is asked
for (``BEHAVIOUR``): a good pair, a pair whose evidence lies after its question, a weak pair
the enhancer fixes, a bad pair the enhancer never fixes, or prose instead of JSON. The verifier
gives every criterion 1.0 unless the pair is marked weak or bad (factual 0.3).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.model import ModelOutput, ModelUsage, get_model

from m3kit.benchmarks.supermemory.construct.prompts import (
    ENHANCER_ROLE,
    PLANNER_ROLE,
    VERIFIER_ROLE,
)
from m3kit.benchmarks.supermemory.construct.records import (
    CaptionedChunk,
    CaptionSegment,
    ChunkCaption,
    SegmentDescription,
    SessionCaptions,
    SpokenText,
    TimeSpan,
    captions_path,
)
from m3kit.models.backend import InspectBackend
from m3kit.schema.supermemory import DATA_DIR, video_path
from m3kit.synth.ego import EgoSuite, EgoSuiteConfig

# One person, two days of 8 scenes of 6 s at 1 fps, no transcript-only session.
TINY = EgoSuiteConfig(seed=3, persons=1, sessions=2, segments=8, fps=1.0, size=128,
                      transcript_only=0, answerable_per_skill=1, unanswerable=0)

BEHAVIOUR = {
    "object_location_memory": "good",
    "conversational_memory": "late",
    "visual_recall": "weak",
    "in_context_retrieval": "good",
    "timeline_reconstruction": "bad",
    "intent_recall": "prose",
}


def write_truth_captions(suite: EgoSuite, root: Path) -> None:
    """Stage 1's files for every session of ``suite``, written from its truth under ``root``."""
    for person in suite.manifest.persons:
        for session in person.sessions:
            segments = []
            for scene in session.scenes:
                heard = [SpokenText(speaker=line.person, transcript=line.text)
                         for line in session.transcript
                         if scene.start <= line.start < scene.end]
                segments.append(CaptionSegment(
                    time_span=TimeSpan(start_time=scene.start, end_time=scene.end),
                    description=SegmentDescription(
                        activities=scene.caption or f"{scene.kind} in the {scene.room}",
                        environment=scene.label, visible_text=scene.note or "",
                        objects=[scene.object] if scene.object else [],
                        audio_transcript=heard)))
            captions = SessionCaptions(
                video_id=session.video_id, subject=person.subject,
                video_path=video_path(person.subject, session.video_id)
                if session.has_video else None,
                duration=session.duration, start_time=session.start_unix,
                chunks=[CaptionedChunk(
                    chunk_index=0, start_time=0.0, end_time=session.duration,
                    caption=ChunkCaption(overall_summary=f"Day {session.day}.",
                                         segments=segments),
                    captioner="truth")])
            file = root / captions_path(person.subject, session.video_id)
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(captions.model_dump_json(indent=1), encoding="utf-8")


def release_root(suite: EgoSuite, root: Path) -> Path:
    """``root`` holding a copy of the suite's recordings and transcripts (no questions, no
    manifest: as a person's own recordings would be) and the stage-1 captions of its truth."""
    for part in ("video", "transcripts"):
        shutil.copytree(suite.root / DATA_DIR / part, root / DATA_DIR / part)
    write_truth_captions(suite, root)
    return root


def _span(video_id: str, start: float, end: float) -> dict[str, Any]:
    return {"video_id": video_id, "start_time": start, "end_time": end}


def draft(kind: str, skill: str, days: list[str], *, answerable: bool = True) -> dict[str, Any]:
    """A planner's (or the enhancer's) reply: evidence on day 1, the question on day 2
    (``late``: evidence at the end of day 2, the question in the middle of day 1)."""
    first, last = days[0], days[-1]
    evidence = [{"reason": "seen there", "video_id": first,
                 "time_span": {"start_time": 6.0, "end_time": 12.0}}]
    question = [_span(last, 30.0, 36.0)]
    if kind == "late":
        evidence = [{"reason": "seen there", "video_id": last,
                     "time_span": {"start_time": 40.0, "end_time": 46.0}}]
        question = [_span(first, 30.0, 36.0)]
    if answerable:
        choices = [
            {"explanation": "as seen", "choice_type": "correct", "text": "On the kitchen shelf"},
            {"explanation": "too vague", "choice_type": "vague", "text": "Somewhere at home"},
            {"explanation": "never", "choice_type": "incorrect", "text": "In the car's boot"}]
        text = "On the kitchen shelf"
    else:
        evidence = []
        choices = [{"explanation": "made up", "choice_type": "incorrect", "text": t}
                   for t in ("In the red drawer", "Under the blue sofa", "On the hall table")]
        text = "The record never shows where the umbrella went."
    return {
        "answer": {"evidence_list": evidence, "is_answerable": answerable,
                   "answer_choices": choices, "text": text},
        "question": {"question_reasoning": "asked a day later",
                     "text": f"Where did I leave it? [{kind}]", "time_spans": question},
        "metadata": {"skill_reasoning": "memory of a place", "skill": skill},
    }


def verdict(score: float) -> dict[str, Any]:
    return {"factual_correctness_reasoning": "checked", "objective_correctness_reasoning": "ok",
            "causal_answerability_reasoning": "ok", "naturalness_reasoning": "ok",
            "guessability_reasoning": "balanced",
            "factual_correctness_score": score, "objective_correctness_score": 1.0,
            "causal_answerability_score": 1.0, "naturalness_score": 1.0,
            "is_guessable": False, "contains_pii": False, "is_salvageable": True,
            "suggestions": [] if score >= 0.6 else ["SALVAGE: FIX ANSWER"]}


@dataclass
class Script:
    days: list[str]  # the person's video ids in clock order
    calls: dict[str, int] = field(default_factory=dict)

    def reply(self, prompt: str) -> str:
        if prompt.startswith(PLANNER_ROLE):
            self._count("plan")
            skill = prompt.split("Skill to test: ", 1)[1].split("\n", 1)[0].strip()
            answerable = "Kind: ANSWERABLE" in prompt
            kind = BEHAVIOUR[skill] if answerable else "good"
            if kind == "prose":
                return "Sure! Here is a lovely question about your day."
            return json.dumps(draft(kind, skill, self.days, answerable=answerable))
        pair = prompt.split("The pair:", 1)[1]
        skill = json.loads(pair[:pair.index("\n}\n") + 2])["metadata"]["skill"]
        if prompt.startswith(VERIFIER_ROLE):
            self._count("verify")
            return json.dumps(verdict(0.3 if "[weak]" in pair or "[bad]" in pair else 1.0))
        if prompt.startswith(ENHANCER_ROLE):
            self._count("enhance")
            kind = "fixed" if "[weak]" in pair else "bad"
            return json.dumps(draft(kind, skill, self.days))
        raise AssertionError(f"unscripted prompt: {prompt[:200]}")

    def _count(self, key: str) -> None:
        self.calls[key] = self.calls.get(key, 0) + 1

    @property
    def total(self) -> int:
        return sum(self.calls.values())

    def __call__(self, messages, tools, tool_choice, config) -> ModelOutput:
        out = ModelOutput.from_content(model="mockllm", content=self.reply(messages[-1].text))
        # Fixed usage: mockllm would otherwise count tokens with tiktoken (a download).
        out.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
        return out


def scripted_backend(suite: EgoSuite) -> tuple[InspectBackend, Script]:
    person = suite.manifest.persons[0]
    script = Script(days=[s.video_id for s in person.sessions])
    return InspectBackend(get_model("mockllm/model", custom_outputs=script)), script
