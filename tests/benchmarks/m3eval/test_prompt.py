"""M3Eval's prompts and frame policies, and N-Back frames drawn per clip on a real video."""

from __future__ import annotations

from m3kit.benchmarks.m3eval.prompt import answer_format, build_prompt
from m3kit.benchmarks.m3eval.task import frame_policy_for
from m3kit.harness.frames import FramePolicy, select_frames
from m3kit.media.store import FrameStore


def test_letter_prompt_lists_options_and_the_final_line(make_q, probe_video):
    prompt = build_prompt(make_q(1, probe_video))
    lines = prompt.splitlines()
    assert lines[0] == "What colour was the box? qid=q1"
    assert lines[1:4] == ["A. red", "B. blue", "C. green"]
    assert '"The final answer is X"' in lines[4] and "(A, B or C)" in lines[4]


def test_nback_prompt_is_yes_no(make_q, probe_video):
    q = make_q(1, probe_video, nback=True, k=4)
    assert answer_format(q) == "yes_no"
    lines = build_prompt(q).splitlines()
    assert lines[1:3] == ["- Yes", "- No"]
    assert '"The final answer is Yes" or "The final answer is No"' in lines[3]


def test_frame_policies():
    assert frame_policy_for_kind("interference") == FramePolicy(n=96)
    assert frame_policy_for_kind("nback") == FramePolicy(n=8, per_clip=True)
    assert frame_policy_for_kind("nback", n=2) == FramePolicy(n=2, per_clip=True)
    assert frame_policy_for_kind("interference", n=0).n == 0


def frame_policy_for_kind(paradigm: str, n: int | None = None) -> FramePolicy:
    from m3kit.schema import Choice, Question

    q = Question(id="x", benchmark="t", text="?", answer="A",
                 choices=[Choice(letter="A", text="Yes"), Choice(letter="B", text="No")],
                 metadata={"paradigm": paradigm})
    return frame_policy_for(q, n)


def test_nback_frames_per_clip(tmp_path, make_q, probe_video):
    store = FrameStore(tmp_path / "store")
    q = make_q(1, probe_video, nback=True, k=4)
    chosen = select_frames(store, q, frame_policy_for(q, 2))
    # two frames in each quarter of the video, none shared between clips
    assert [f.index for f in chosen] == [0, 24, 25, 49, 50, 74, 75, 99]
