"""A scripted question-generation model for the M3Eval builder tests.

It is inspect's real ``mockllm/model`` with a callable ``custom_outputs``: every reply is chosen
from the prompt the pipeline sent, so the tests run the real code path (InspectBackend →
inspect → reply → parsing → checker) with outputs fixed in advance. ``conftest.py`` loads it as
the module ``m3eval_scripted`` (tests are not a package).

Behaviour:
- captions: the very first caption reply is wrapped in a ``result`` key (malformed), every
  later one is the strict six-key object; with ``always_malformed_captions`` none is ever good;
- questions targeting ``video1`` (and memory interference, always video1) are good designs;
- questions targeting ``video2`` are broken: source_confusion breaks the slot grid, order
  disruption moves a clause instead of swapping it in place, content_forgetting never replies
  with JSON, source memory answers the wrong video; false source and the rest stay good;
- N-back labels cycle through fixed phrases, one reply in a different case, so the running list
  must map it back to the exact phrase;
- with ``kill_at_question=n`` the n-th question prompt raises ``Killed`` (a run dying mid-way).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import ModelOutput, ModelUsage, get_model

from m3kit.models.backend import DEFAULT_CALL_ATTEMPTS, InspectBackend

CAPTION = {
    "main_storyline": "A cook prepares a meal at a kitchen counter, chopping and then frying.",
    "spatial_relation_binding": "The cutting board is left of the stove.",
    "short_term_action_state": "The burner flame turns on.",
    "tool_prop": "A knife, a cutting board and a frying pan.",
    "fine_visual_attribute": "The cook wears a teal apron with white dots.",
    "text_symbol": "",
}
A_SWAP = ("In the video a cook dices red onions on a wooden board and sets them aside. Later "
          "the cook pours the mixture into a cast iron pan and stirs it slowly until golden.")
S1 = ("dices red onions", "peels green apples")
S2 = ("a cast iron pan", "a glass bowl")
A_ORDER = ("The cook opens the fridge and then takes out the eggs in the morning. Afterwards "
           "the cook cracks the eggs before the cook whisks them in a bowl.")
O1 = ["opens the fridge", "takes out the eggs"]
O2 = ["cracks the eggs", "the cook whisks them"]
STEM = "Which of the following options most accurately describes what happened in Video {n}?"
ACTIONS = ["chopping vegetables", "CHOPPING vegetables", "washing dishes", "frying eggs"]
SCENES = ["home kitchen", "home kitchen", "restaurant kitchen"]


def swap_in(text: str, *pairs: tuple[str, str]) -> str:
    """``text`` with each slot's correct phrase replaced by its incorrect one."""
    for a, b in pairs:
        text = text.replace(a, b)
    return text


def swap_order(text: str, *slots: list[str]) -> str:
    """``text`` with the two clauses of each order slot exchanged in place."""
    for x, y in slots:
        text = text.replace(x, "\0").replace(y, x).replace("\0", y)
    return text


class Killed(RuntimeError):
    """The scripted model dies: what a killed generation run looks like to the pipeline."""


def storyline(mode: str, target: str, broken: bool) -> dict[str, Any]:
    n = target[-1]
    roles = {"A": "correct", "B": mode, "C": mode, "D": mode}
    if mode == "order_disruption":
        options = {"A": A_ORDER, "B": swap_order(A_ORDER, O1), "C": swap_order(A_ORDER, O2),
                   "D": swap_order(A_ORDER, O1, O2)}
        if broken:  # B moves the first clause into the second sentence instead of swapping
            options["B"] = ("The cook takes out the eggs in the morning. Afterwards the cook "
                            "opens the fridge and then cracks the eggs before the cook whisks "
                            "them in a bowl.")
        design = {"slot_1": {"correct_anchors": O1, "incorrect_anchors": O1[::-1]},
                  "slot_2": {"correct_anchors": O2, "incorrect_anchors": O2[::-1]}}
    else:
        options = {"A": A_SWAP, "B": swap_in(A_SWAP, S1), "C": swap_in(A_SWAP, S2),
                   "D": swap_in(A_SWAP, S1, S2)}
        if broken:  # C also rewords a detail outside slot 2
            options["C"] = options["C"].replace("wooden", "plastic")
        design = {"slot_1": {"correct": S1[0], "incorrect": S1[1]},
                  "slot_2": {"correct": S2[0], "incorrect": S2[1]}}
    return {"question": STEM.format(n=n), "target_video": target, "options": options,
            "option_role_by_letter": roles, "storyline_2x2_design": design}


def interference(target: str) -> dict[str, Any]:
    return {"question": "What colour was the apron the cook wore while chopping?",
            "target_video": target,
            "options": {"A": "Teal with white dots", "B": "Red with a black stripe",
                        "C": "Orange and plain", "D": "A silver laptop bag"},
            "answer": "A",
            "option_role_by_letter": {"A": "correct", "B": "intrusion", "C": "intrusion",
                                      "D": "irrelevant_distractor"},
            "intrusion_option_letter": "C"}


def source_memory(target: str, broken: bool) -> dict[str, Any]:
    answer = "A" if target == "video1" else "B"
    if broken:
        answer = "A" if answer == "B" else "B"
    return {"question": "In which video did a teal apron with white dots appear?",
            "target_video": target, "options": {"A": "Video 1", "B": "Video 2"},
            "answer": answer, "option_role_by_letter": {"A": "video1_only", "B": "video2_only"}}


def false_source() -> dict[str, Any]:
    return {"question": "In which video did someone light a birthday candle?",
            "target_video": "neither",
            "options": {"A": "Video 1", "B": "Video 2", "C": "Both videos",
                        "D": "Neither video"},
            "answer": "D", "stem_anchor": "birthday candle"}


@dataclass
class Script:
    always_malformed_captions: bool = False
    kill_at_question: int | None = None
    malformed_labels: bool = False  # N-back label replies in prose: every clip unlabelled
    calls: dict[str, int] = field(default_factory=dict)

    def reply(self, prompt: str) -> str:
        if "video evidence describer" in prompt:
            n = self._count("caption")
            if self.always_malformed_captions or n == 0:
                return json.dumps({"result": CAPTION})
            return json.dumps(CAPTION)
        if "Existing Actions:" in prompt:
            n = self._count("label")
            if self.malformed_labels:
                return "I think the person is cooking in a kitchen."
            return f"Action: {ACTIONS[n % len(ACTIONS)]} | Scene: {SCENES[n % len(SCENES)]}"
        asked = self._count("question") + 1
        if asked == self.kill_at_question:
            raise Killed(f"killed at question call {asked}")
        target_match = re.search(r'"target_video": "(video\d|neither)"', prompt)
        target = target_match.group(1) if target_match else "video1"
        broken = target == "video2"
        for mode in ("source_confusion", "order_disruption", "content_forgetting"):
            if f"This prompt is for {mode}" in prompt:
                self._count(mode)
                if mode == "content_forgetting" and broken:
                    return "Sure! Here is the question you asked for."
                return json.dumps(storyline(mode, target, broken))
        if "question_type_id: memory_interference" in prompt:
            return json.dumps(interference(target))
        if "question_type_id: source_memory" in prompt:
            return json.dumps(source_memory(target, broken))
        if "false_source_attribution" in prompt:
            return json.dumps(false_source())
        raise AssertionError(f"unscripted prompt: {prompt[:200]}")

    def _count(self, key: str) -> int:
        n = self.calls.get(key, 0)
        self.calls[key] = n + 1
        return n

    def __call__(self, messages, tools, tool_choice, config) -> ModelOutput:
        out = ModelOutput.from_content(model="mockllm", content=self.reply(messages[-1].text))
        # Fixed usage: mockllm would otherwise count tokens with tiktoken (a download).
        out.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
        return out


def scripted_backend(**kwargs: Any) -> tuple[InspectBackend, Script]:
    script = Script(**kwargs)
    # a killed run dies: its call is not tried again (the backend retries a failed call)
    attempts = 1 if script.kill_at_question else DEFAULT_CALL_ATTEMPTS
    return (InspectBackend(get_model("mockllm/model", custom_outputs=script),
                           max_attempts=attempts), script)
