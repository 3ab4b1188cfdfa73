"""Question-generation prompts, one per failure mode, after the paper's Appendix C.1.3.

Each prompt keeps the paper's design instructions (the 2×2 slot grid, verbatim anchors, roles,
fixed source labels) and ends with the exact JSON reply m3kit parses, because the paper does not
print its runtime output schema. The target video is fixed by the pipeline (not left to the
model) so that the probe videos, composed before generation, put the target where each condition
needs it; the checker verifies the model kept it.
"""

from __future__ import annotations

__all__ = ["PARADIGM_SETTINGS", "question_prompt"]

PARADIGM_SETTINGS = {
    "split_screen": "Two semantically similar videos are shown side by side throughout the full "
                    "clip.",
    "interleaved": "Two semantically similar videos are each cut into 10 segments and the "
                   "segments are interleaved into one stream (Video 1 segment 1, Video 2 segment "
                   "1, Video 1 segment 2, ...).",
    "memory_interference": "Two semantically similar videos are concatenated into a single "
                           "continuous video for the model to watch.",
}

_ROLE = "Role: You are a professional video memory test question designer.\n"

_STORYLINE_TASK = (
    "Task: {setting} You will receive sparse frame-batch caption contexts for Video 1 and "
    "Video 2. Design exactly 1 multiple-choice storyline-reconstruction question asking which "
    "narrative paragraph most accurately describes what happened in {target_label}.\n"
    "Focus: Build the question around the main storyline, process stages, or high-level event "
    "progression of the target video rather than tiny fleeting details.\n"
)

_GRID = (
    "The four options must realize the full 2x2 grid: A: slot_1=correct, slot_2=correct; "
    "B: slot_1=incorrect, slot_2=correct; C: slot_1=correct, slot_2=incorrect; "
    "D: slot_1=incorrect, slot_2=incorrect. All three wrong options must stay within the single "
    "error family {mode}. Construct A first, then create B, C and D by copying A and changing "
    "only the required slot(s); do not rewrite the paragraph for each letter.\n"
)

_SWAP_DESIGN = {
    "source_confusion": (
        "2x2 Combinatorial Design: This prompt is for source_confusion. Option A must be the "
        "only correct paragraph before downstream option shuffle. Select exactly two "
        "non-adjacent manipulable positions, slot_1 and slot_2, inside one shared storyline "
        "scaffold. For each slot, prepare: the real target-video main-stage detail as the "
        "correct version; a corresponding main-stage detail from the other video as the "
        "incorrect version.\n"
    ),
    "content_forgetting": (
        "2x2 Combinatorial Design: This prompt is for content_forgetting. Option A must be the "
        "only correct paragraph before downstream option shuffle. Select exactly two "
        "non-adjacent manipulable positions, slot_1 and slot_2, inside one shared storyline "
        "scaffold. For each slot, prepare: the real target-video main-stage detail as the "
        "correct version; a plausible but nonexistent main-stage detail (in neither video) as "
        "the incorrect version.\n"
    ),
}

_ORDER_DESIGN = (
    "2x2 Combinatorial Design: This prompt is for order_disruption. Option A must be the only "
    "correct paragraph before downstream option shuffle. Select exactly two non-overlapping "
    "reversible event pairs, slot_1 and slot_2, inside one shared storyline scaffold. For each "
    "slot, the true temporal order is the correct version and the two clauses swapped is the "
    "incorrect version. Represent each slot with the same two short event clauses reused "
    "word-for-word across all four options; form the incorrect version only by swapping those "
    "exact clauses in place inside the same sentence. The four anchor clauses must all be "
    "distinct and each must appear exactly once in every option. Build slot_1 and slot_2 in two "
    "separate sentences.\n"
)

_WRITING = (
    "Writing Constraints: 1. The question must ask: \"Which of the following options most "
    "accurately describes what happened in {target_label}?\" 2. Each option is one coherent "
    "narrative paragraph of about 90-160 words. 3. All four options keep the same paragraph "
    "structure and narrative scaffold. 4. Differences center on meaningful storyline stages, "
    "not wording noise. 5. Fluent prose, no bullet labels. 6. The four option strings must all "
    "be distinct.\n"
    "Self-Check: option_role_by_letter is A=correct, B/C/D={mode}. The slot anchors are exact "
    "verbatim spans copied from the option text so a checker can verify their presence and "
    "absence; never paraphrase or inflect them across options. B differs from A only at "
    "slot_1, C only at slot_2, D at both.\n"
)

_STORYLINE_JSON = {
    "swap": (
        'Reply with STRICT JSON only, no markdown: {{"question": "...", "target_video": '
        '"{target}", "options": {{"A": "...", "B": "...", "C": "...", "D": "..."}}, '
        '"option_role_by_letter": {{"A": "correct", "B": "{mode}", "C": "{mode}", "D": '
        '"{mode}"}}, "storyline_2x2_design": {{"slot_1": {{"correct": "<verbatim span in A and '
        'C>", "incorrect": "<verbatim span in B and D>"}}, "slot_2": {{"correct": "<verbatim '
        'span in A and B>", "incorrect": "<verbatim span in C and D>"}}}}}}'
    ),
    "order": (
        'Reply with STRICT JSON only, no markdown: {{"question": "...", "target_video": '
        '"{target}", "options": {{"A": "...", "B": "...", "C": "...", "D": "..."}}, '
        '"option_role_by_letter": {{"A": "correct", "B": "{mode}", "C": "{mode}", "D": '
        '"{mode}"}}, "storyline_2x2_design": {{"slot_1": {{"correct_anchors": ["<first '
        'clause>", "<second clause>"], "incorrect_anchors": ["<second clause>", "<first '
        'clause>"]}}, "slot_2": {{"correct_anchors": ["...", "..."], "incorrect_anchors": '
        '["...", "..."]}}}}}}'
    ),
}

_FALSE_SOURCE = (
    "You are generating exactly ONE 4-option false-source question for two similar videos named "
    "video1 and video2. Canonical type: question_type_id: false_source_attribution; "
    "question_type: False Source Attribution. {setting}\n"
    "Goal: Ask about a semantically related event or detail that appears in neither video. The "
    "false event should feel relevant to the two videos, not random.\n"
    "Required Design: Use only the provided captions as grounding for what is related and what "
    "is absent. The stem detail must be absent from both videos. Use exactly these 4 option "
    "texts: Video 1, Video 2, Both videos, Neither video (A. Video 1, B. Video 2, C. Both "
    "videos, D. Neither video). The correct answer is the Neither video option. Set "
    "target_video to neither. Put the asked-about detail, copied verbatim from the question, "
    "in stem_anchor.\n"
    'Reply with STRICT JSON only, no markdown: {{"question": "...", "target_video": "neither", '
    '"options": {{"A": "Video 1", "B": "Video 2", "C": "Both videos", "D": "Neither video"}}, '
    '"answer": "D", "stem_anchor": "..."}}'
)

_INTERFERENCE = (
    _ROLE + "Task: {setting} You will receive sparse frame-caption contexts for each video. "
    "Design exactly 1 multiple-choice question that tests whether recall of {target_label}'s "
    "fine visual attribute is invaded by a similar attribute from the other video.\n"
    "Focus: Prioritize subtle appearance evidence such as colors, patterns, materials, shapes, "
    "markings, textures, accessories, or small appearance cues; details visible only briefly "
    "and easy to confuse across similar scenes; grounded visual attributes rather than broad "
    "plot summaries.\n"
    "Treat the provided Video 1 and Video 2 contexts as the only source evidence. Generate "
    "exactly ONE 4-option multiple-choice question. Canonical type: question_type_id: "
    "memory_interference. Set target_video to {target}. Set target_memory_ability to "
    "memory_interference_fine_visual_attribute. Include option_role_by_letter with exactly one "
    "correct, two intrusion (attributes from the other video), and one irrelevant_distractor. "
    "Set intrusion_option_letter to one of the intrusion letters. The question must not name "
    "the video by number: the model watching the concatenation is told which part to recall "
    "only through content.\n"
    'Reply with STRICT JSON only, no markdown: {{"question": "...", "target_video": '
    '"{target}", "target_memory_ability": "memory_interference_fine_visual_attribute", '
    '"options": {{"A": "...", "B": "...", "C": "...", "D": "..."}}, "answer": "<letter>", '
    '"option_role_by_letter": {{"A": "...", "B": "...", "C": "...", "D": "..."}}, '
    '"intrusion_option_letter": "<letter>"}}'
)

_SOURCE_MEMORY = (
    _ROLE + "Task: {setting} You will receive sparse frame-caption contexts for Video 1 and "
    "Video 2. Design exactly 1 source-memory multiple-choice question about a short-lived fine "
    "visual attribute that truly appeared in only {target_label}.\n"
    "Focus: Prioritize subtle appearance evidence such as colors, patterns, materials, shapes, "
    "markings, textures, accessories, or small appearance cues that are visible briefly and "
    "easy to confuse across similar scenes.\n"
    "Generate exactly ONE 2-option multiple-choice question. Canonical type: question_type_id: "
    "source_memory. Use exactly these 2 answer texts: A. Video 1, B. Video 2. Set target_video "
    "to {target}. Set target_memory_ability to source_memory_fine_visual_attribute. Include "
    "option_role_by_letter as a JSON object with exactly: A: video1_only; B: video2_only.\n"
    'Reply with STRICT JSON only, no markdown: {{"question": "...", "target_video": '
    '"{target}", "options": {{"A": "Video 1", "B": "Video 2"}}, "answer": "{answer}", '
    '"option_role_by_letter": {{"A": "video1_only", "B": "video2_only"}}}}'
)


def question_prompt(mode: str, paradigm: str, target: str, context: str) -> str:
    """The generation prompt for one failure mode, paradigm and target, with its caption context.

    ``target`` is ``video1`` / ``video2`` (``neither`` for false source attribution).
    """
    setting = PARADIGM_SETTINGS[paradigm]
    label = {"video1": "Video 1", "video2": "Video 2"}.get(target, "neither video")
    if mode in ("source_confusion", "content_forgetting", "order_disruption"):
        design = _ORDER_DESIGN if mode == "order_disruption" else _SWAP_DESIGN[mode]
        kind = "order" if mode == "order_disruption" else "swap"
        text = (_ROLE + _STORYLINE_TASK.format(setting=setting, target_label=label) + design
                + _GRID.format(mode=mode) + _WRITING.format(target_label=label, mode=mode)
                + _STORYLINE_JSON[kind].format(target=target, mode=mode))
    elif mode == "false_source_attribution":
        text = _FALSE_SOURCE.format(setting=setting)
    elif mode == "memory_interference":
        text = _INTERFERENCE.format(setting=setting, target=target, target_label=label)
    elif mode == "source_memory":
        text = _SOURCE_MEMORY.format(setting=setting, target=target, target_label=label,
                                     answer="A" if target == "video1" else "B")
    else:
        raise ValueError(f"unknown failure mode {mode!r}")
    return f"{text}\n\nContext:\n{context}\n"
