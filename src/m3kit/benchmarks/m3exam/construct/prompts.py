"""Prompt templates, in the order the pipeline calls them (M3Exam Appendix E).

The paper's verbatim templates are figures that the seed text does not carry; these are
m3kit's own wording of what each template is described to do, each ending with the exact JSON
shape that ``call_json`` validates. ``str.format`` fields are filled by the stage modules.
"""

from __future__ import annotations

EVENT_JSON = (
    '{{"description": "what happens", "query": "what the user shares and asks about it", '
    '"date": "YYYY-MM-DD", "keyword": "an image-search keyword"}}'
)

TIMELINE_CORE = """You are building the event timeline of a long-running user-assistant \
conversation.
Persona: {persona}
Core event: {core_event}

Write {n} chronologically ordered events that carry the core event forward, starting on \
{start_date}. Each event pairs a life event with the visually grounded question the persona \
will raise about photos or documents of it. Dates must be strictly increasing.
Answer with a JSON array of {n} objects, each {event_json}."""

TIMELINE_DISTRACTORS = """The persona below pursues a core storyline; real users drift \
off-topic. Write {n} side events from domains unrelated to the core event (errands, hobbies, \
casual chatter), dated between {first_date} and {last_date}, consistent with the persona.
Persona: {persona}
Core event: {core_event}
Answer with a JSON array of {n} objects, each {event_json}."""

TIMELINE_SELF_CHECK = """Audit this timeline for: persona violations, drift from the core \
event (core events only), offensive content, and internal contradictions (dates out of order, \
mutually exclusive states). Flag only events with a real problem.
Persona: {persona}
Core event: {core_event}
Timeline:
{timeline}
Answer with JSON {{"flags": [{{"target": <event index>, "category": "persona_violation" | \
"core_event_drift" | "offensive" | "contradiction", "problem": "what is wrong"}}]}}; \
{{"flags": []}} when nothing is wrong."""

TIMELINE_REPAIR = """Rewrite event {index} of this timeline to fix the problem, keeping its \
role in the story. Its date must stay between {date_low} and {date_high}.
Problem ({category}): {problem}
Persona: {persona}
Core event: {core_event}
Event {index}: {event}
Neighbouring events:
{neighbours}
Answer with one JSON object {event_json}."""

CAPTION = """Describe this image in one factual sentence (what is shown, who, where). \
Answer with JSON {{"description": "..."}}."""

USER_SIMULATOR = """You play {name}, the user, talking to an AI assistant.
Persona: {persona}
What happened so far (summaries of earlier rounds):
{memory}
Previous event: {previous_event}
Current event ({date}): {event}
What the user wants to ask: {query}
Attached now: {attachments}{documents}
{mode}
Answer with JSON {{"user": "the user's message", "is_followup": true | false}}."""

USER_OPENING = """This is the first round: write one scene-setting question that introduces \
the situation. is_followup is false."""

USER_NEXT = """Ask about the current event over the attached files, quoting a concrete detail. \
Set is_followup true only if the message also returns to the previous event."""

USER_FOLLOWUP = """Write a follow-up message about the current event that builds on the \
assistant's last reply: {last_reply}. is_followup is true."""

ASSISTANT = """You are a helpful, expert assistant. Reply to the user's message, using the \
conversation so far and the attached files when relevant (say so when an answer is not visible \
in them).
Conversation so far (summaries of earlier rounds):
{memory}
Attached files: {attachments}{documents}
User: {user}"""

DOCUMENT_PAGES = """
Text of the pages of {file}:
{text}"""

USER_DOCUMENT = """The shared evidence now is a document, not a photo: your message must quote \
a concrete number, label or term from its pages."""

ASSISTANT_DOCUMENT = """Answer using only the document's visible pages for anything about \
it, and say so when the answer is not on them."""

ROUND_SUMMARY = """Condense this exchange into one sentence keeping names, numbers, decisions \
and attached files.
User: {user}
Assistant: {assistant}
Answer with JSON {{"summary": "..."}}."""

DIALOGUE_CHUNK_AUDIT = """Audit these consecutive conversation rounds for persona \
violations, drift from the core event, hallucinations and contradictions within the slice.
Persona: {persona}
Core event: {core_event}
Rounds:
{rounds}
Answer with JSON {{"flags": [{{"target": "<round id from the slice>", "category": \
"persona_violation" | "core_event_drift" | "hallucination" | "contradiction", "problem": \
"..."}}]}}; {{"flags": []}} when nothing is wrong."""

DIALOGUE_CROSS_AUDIT = """Here is a compact overview of a whole conversation, one summary \
per round. Find contradictions and broken invariants between distant rounds (facts, names, \
numbers or states that change without reason).
Persona: {persona}
Overview:
{overview}
Answer with JSON {{"flags": [{{"target": "<round id>", "category": "contradiction", \
"problem": "... (name the earlier round it contradicts)"}}]}}; {{"flags": []}} when nothing \
is wrong."""

DIALOGUE_REPAIR = """Rewrite round {round_id} of this conversation to fix the problem while \
staying consistent with its neighbours.
Problem ({category}): {problem}
Persona: {persona}
Previous round: {previous}
Round {round_id}: User: {user}
Assistant: {assistant}
Next round: {next}
Answer with JSON {{"user": "...", "assistant": "..."}}."""

QUESTION_COMMON = """You write memory-test questions about the conversation excerpt below. \
Each item has a question, an answer list whose first entry is the gold answer and whose \
later entries are progressively coarser acceptable alternatives, and supporting_facts: the \
ids of the rounds (like D3:4) that contain the evidence. Cite only rounds shown below.
Excerpt:
{context}

Task ({qtype}): {instruction}
Write {n} item(s). Answer with a JSON array of objects {{"question": "...", "answer": \
["gold", "coarser", ...], "supporting_facts": ["D1:2", ...]}}."""

QUESTION_FOCUS = {
    "image": "Focus: the image(s) attached to round {round_id}.",
    "document": "Focus: the document attached to round {round_id}; ask about its pages and "
    "cite {round_id}.",
}

QUESTION_INSTRUCTIONS = {
    "ss": "Single-session recall: each question is answerable only from ONE round of this "
    "excerpt (cite exactly one round); the gold answer is a short phrase.",
    "ms": "Multi-session: the answer must combine facts from at least two different "
    "sessions; cite rounds from at least two sessions.",
    "tr": "Temporal reasoning: ask about dates, event order or time spans, using the session "
    "dates. Store the gold date in several formats, e.g. [\"2023-10-10\", \"October 10, "
    "2023\", \"October 2023\"].",
    "mr": "Multimodal reasoning: ask for something visible in an attached image or document "
    "page (a number, label, colour, count) that the dialogue text does not state; cite the "
    "round the image or document is attached to.",
    "fm": "Find the matching image: describe one attached image so that it matches exactly "
    "one candidate; the answer list is the matching image id first, then the competing "
    "candidates (e.g. [\"img_60\", \"img_61\"]). End the question with: Return the image "
    "file name in the format img_<number>.",
    "th": "Thematic reasoning: ask for a procedure, plan or rationale the assistant gave, "
    "bundling at least three steps; the answer list goes from the full answer to a short "
    "version to a keyword.",
    "ii": "Implicit inference: ask for something never stated outright (a role, a "
    "relationship, a motivation) that clues across several rounds imply; the answer is a "
    "qualitative noun phrase, never a count; cite at least two rounds.",
    "fj": "Factual judgment: a multiple-choice question with options (A) to (D) written in "
    "the question text, one correct and three plausible distractors; the answer list is the "
    "single gold letter. End the question with: Output only the letter of the correct option "
    "(A, B, C, or D).",
}
