"""Facts recorded after the question time: they exist, they are after the cut, and the answer
they would lead to is a wrong option (seed 003 §4.2: causality; issue 12 item 6)."""

from __future__ import annotations

from collections import Counter

from m3kit.schema.supermemory import ABSTAIN_TEXT
from m3kit.synth.ego import EgoSuite, PersonWorld


def _recorded_text(world: PersonWorld, video_id: str, start: float, end: float) -> str:
    """Everything the frames and the transcript say inside ``[start, end]`` of a session."""
    session = world.session(video_id)
    said = [s.label + " " + (s.caption or "") + " " + (s.note or "")
            for s in session.scenes if s.start < end and s.end > start]
    said += [line.text for line in session.transcript if line.start < end and line.end > start]
    return " ".join(said).lower()


def test_post_cut_facts_are_after_the_question_and_their_answer_is_wrong(
        ego_suite: EgoSuite) -> None:
    tags = Counter()
    for q in ego_suite.questions:
        truth = ego_suite.truth(q.question_id)
        if truth.leak is None:
            continue
        tags[truth.tag] += 1
        leak = truth.leak
        # strictly after the cut: not one frame or transcript line of it is visible
        assert leak.start_unix > truth.question_time_unix
        assert leak.start_unix == ego_suite.person(q.subject).session(leak.video_id).start_unix \
            + leak.start
        option = q.choices[truth.leak_option_index]
        assert truth.leak_option_index != q.correct_option_index
        assert q.choice_types[truth.leak_option_index] == "incorrect"
        # the leaked fact is really recorded there: its distinctive words are on screen or said
        recorded = _recorded_text(ego_suite.person(q.subject), leak.video_id, leak.start,
                                  leak.end)
        distinctive = [w for w in option.lower().rstrip(".").split()
                       if w not in {"on", "in", "the", "at", "some", "code", "degrees", "cups",
                                    "locker"}]
        assert distinctive and all(w in recorded for w in distinctive), (option, recorded)
        if truth.tag.startswith("post_cut"):
            assert not q.is_answerable and q.correct_answer == ABSTAIN_TEXT
        else:  # an object moved after the question: where it was then is the answer
            assert truth.tag == "moved_after_cut" and q.is_answerable
    assert tags["post_cut_same_session"] >= 1  # hidden by the cut inside the question's session
    assert tags["post_cut_later_session"] >= 1  # hidden because its session comes later
    assert tags["moved_after_cut"] >= 1


def test_question_session_is_cut_inside_a_scene(ego_suite: EgoSuite) -> None:
    """The question time falls before its scene ends, so the next scene's first frame (where a
    post-cut fact may begin) is after the cut."""
    for q in ego_suite.questions:
        truth = ego_suite.truth(q.question_id)
        session = ego_suite.person(q.subject).session(q.metadata.primary_video_id)
        local = truth.question_time_unix - session.start_unix
        assert any(s.start < local < s.end for s in session.scenes)


def test_never_recorded_questions_are_unanswerable(ego_suite: EgoSuite) -> None:
    never = [q for q in ego_suite.questions if ego_suite.truth(q.question_id).tag == "never_seen"]
    assert never
    for q in never:
        assert not q.is_answerable
        world = ego_suite.person(q.subject)
        for option in q.choices:
            if option != ABSTAIN_TEXT and "leave my" in q.question:
                obj = q.question.split("leave my ")[1].rstrip("?")
                assert obj == world.never_seen_object
                assert all(s.object != obj for s in world.sessions for s in s.scenes)


def _recorded(world: PersonWorld, cut: float | None) -> list[str]:
    """What the person's recordings say (the labels OCR reads, the transcript lines) up to the
    unix time ``cut``, or all of it (``None``: a reader that ignores the cut)."""
    said = []
    for s in world.sessions:
        if s.has_video:
            said += [" ".join(x for x in (sc.label, sc.caption, sc.note) if x)
                     for sc in s.scenes if cut is None or s.start_unix + sc.start <= cut]
        said += [f"{line.person or 'sound'}: {line.text}" for line in s.transcript
                 if cut is None or s.start_unix + line.end <= cut]
    return said


def test_a_reader_past_the_cut_picks_the_leaked_answer(ego_suite: EgoSuite) -> None:
    """m3kit/builtin given everything a person recorded up to the question abstains on a fact
    recorded later (or answers where the object was); given everything, it picks the later
    fact's answer and loses the question: a leak is visible in the score."""
    from inspect_ai.model import ChatMessageUser

    from m3kit.models.builtin import BuiltinModelAPI

    model = BuiltinModelAPI("builtin", ocr=False, speech=False)
    picked = {"causal": 0, "leaking": 0}
    correct = {"causal": 0, "leaking": 0}
    asked = 0
    for q in ego_suite.questions:
        truth = ego_suite.truth(q.question_id)
        if truth.leak_option_index is None:
            continue
        asked += 1
        for name, cut in (("causal", truth.question_time_unix), ("leaking", None)):
            options = "\n".join(f"{letter}. {c}"
                                for letter, c in zip("ABCD", q.choices, strict=True))
            prompt = "\n".join([*_recorded(ego_suite.person(q.subject), cut),
                                f"Question: {q.question}", options,
                                "Answer with the option's letter."])
            reply = model.answer([ChatMessageUser(content=prompt)]).completion
            letter = reply.strip().rstrip(".")[-1]
            picked[name] += "ABCD".index(letter) == truth.leak_option_index
            correct[name] += "ABCD".index(letter) == q.correct_option_index
    assert asked >= 3
    assert picked["causal"] == 0
    assert picked["leaking"] > asked / 2
    assert correct["leaking"] < correct["causal"]
