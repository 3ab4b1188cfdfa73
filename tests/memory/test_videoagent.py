"""``videoagent`` (VideoAgent, Wang et al., 2024): frame units with the speech heard before
them, the first uniform look, self-reflection, per-segment frame retrieval, at most three
answers, the causal cut, lenient replies, and calls and tokens counted.

Real pieces: MiniLM embeddings, faiss, RapidOCR on rendered frames. The answer model is
inspect's ``mockllm`` scripted by what each prompt asks (answer, confidence, frames), the
scripted OpenAI-compatible server (``tests/fakeserver.py``) through inspect's ``openai-api``
provider for replies that do not parse, and once the offline ``m3kit/builtin`` through the whole
SuperMemory-VQA task on a synthetic suite.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest

from m3kit.memory import MemoryEvent, MemoryItem, make_memory
from m3kit.memory.videoagent import (
    FrameQuery,
    VideoAgentMemory,
    frame_units,
    parse_confidence,
    parse_queries,
)
from m3kit.perception.captions import SURROGATE_LABEL

from .conftest import CACHED_TOKENS, INPUT_TOKENS, OUTPUT_TOKENS

ANSWER = "Answer: B"
KETTLE = "a red kettle on the pantry shelf"
BICYCLE = "a blue bicycle leaning in the garage"


def frames(descriptions: dict[int, str], count: int = 21) -> list[MemoryEvent]:
    """``count`` frames one second apart (``frame-00`` at 0 s), each described by
    ``descriptions`` or as a plain kitchen counter; no pixels (their text is the data's)."""
    return [MemoryEvent(id=f"frame-{n:02d}", kind="frame", time=float(n),
                        text=descriptions.get(n, "an empty kitchen counter"))
            for n in range(count)]


def speech(name: str, end: float, text: str) -> MemoryEvent:
    return MemoryEvent(id=name, kind="transcript", time=end, text=text,
                       metadata={"start": end - 1.0})


@dataclass
class Script:
    """A mockllm that answers by what the prompt asks: the confidence step with
    ``confidence``, the frames step with ``queries[i]`` for its i-th call, anything else with
    ``ANSWER``; every prompt's text is kept, with the kind of step it was."""

    confidence: str
    queries: list[str] = field(default_factory=list)
    prompts: list[tuple[str, str]] = field(default_factory=list)

    def model(self) -> Any:
        from inspect_ai.model import ModelOutput, ModelUsage, get_model

        def respond(messages: list[Any], tools: Any, tool_choice: Any, config: Any
                    ) -> ModelOutput:
            text = messages[-1].text
            step = ("confidence" if '"confidence"' in text
                    else "frames" if "frame_descriptions" in text else "answer")
            asked = sum(1 for s, _ in self.prompts if s == "frames")
            self.prompts.append((step, text))
            content = {"confidence": self.confidence, "answer": ANSWER}.get(step) or (
                self.queries[asked] if asked < len(self.queries) else "{}")
            output = ModelOutput.from_content(model="mockllm", content=content)
            # set explicitly: mockllm would otherwise count tokens with tiktoken (a download)
            output.usage = ModelUsage(input_tokens=INPUT_TOKENS, output_tokens=OUTPUT_TOKENS,
                                      input_tokens_cache_read=CACHED_TOKENS)
            return output

        return get_model("mockllm/model", custom_outputs=respond, memoize=False)

    def steps(self) -> list[str]:
        return [s for s, _ in self.prompts]


def agent(embedder: Any, **settings: Any) -> VideoAgentMemory:
    return VideoAgentMemory(embedder=embedder, ocr=False, **settings)


def ask(memory: Any, events: list[MemoryEvent], model: Any, time: float | None = None,
        question: str = "Where is the kettle?") -> Any:
    """``memory`` ingests ``events`` under ``k`` and answers ``question`` with two options."""
    async def run() -> Any:
        await memory.ingest("k", events)
        return await memory.answer("k", f"{question}\nA. Garage\nB. Pantry", model,
                                   time=time, query=question)

    return asyncio.run(run())


# -- pure parts ------------------------------------------------------------------------------------


def test_speech_joins_the_next_frame_within_the_window() -> None:
    def item(n: str, kind: Any, t: float, text: str) -> MemoryItem:
        return MemoryItem(id=n, key="k", event_id=n, modality=kind, time=t, text=text,
                          metadata={"start": t - 1.0})

    units = frame_units([item("line-a", "transcript", 1.0, "first words"),
                         item("f1", "frame", 4.0, "a door"),
                         item("line-b", "transcript", 5.0, "later words"),
                         item("f2", "frame", 100.0, "a window"),
                         item("line-c", "transcript", 120.0, "after every frame")], 30.0)
    assert [u.id for u in units] == ["f1", "line-b", "f2", "line-c"]
    assert units[0].text == "a door\nfirst words"  # heard before the frame: joins it
    assert units[0].metadata["heard"] == [("line-a", 0.0, "first words")]
    assert units[1].text == "later words"  # 95 s before the next frame: a unit of its own
    assert units[2].text == "a window"


def test_replies_are_read_leniently() -> None:
    assert parse_confidence('{"confidence": 3}') == 3
    assert parse_confidence("Sure.\n```json\n{'confidence': '2'}\n```") == 2
    assert parse_confidence('{"confidence": 7}') is None
    assert parse_confidence('{"confidence": "Infinity"}') is None
    assert parse_confidence("I am fairly confident.") is None
    reply = ('{"frame_descriptions": [{"segment_id": "2", "description": "a kettle"}, '
             '{"segment_id": 9, "description": "out of range"}, {"segment_id": 1}]}')
    assert parse_queries(reply, 3) == [FrameQuery(segment=2, description="a kettle")]
    assert parse_queries('{"frame_descriptions": []}', 3) is None
    assert parse_queries("look at the kitchen", 3) is None


def test_registered_by_name_with_its_settings() -> None:
    memory = make_memory("videoagent", frames=4, rounds=2, ocr=False)
    assert isinstance(memory, VideoAgentMemory)
    config = memory.config()
    assert (config["frames"], config["rounds"], config["captioner"]) == (
        4, 2, "surrogate-caption")
    assert config["retrieval"] == "dense"  # CLIP's cosine, over text embeddings
    with pytest.raises(ValueError, match="frames must be at least 2"):
        VideoAgentMemory(frames=1)


# -- the loop --------------------------------------------------------------------------------------


def test_confidence_three_on_the_first_round_stops(embedder) -> None:
    script = Script(confidence='{"confidence": 3}')
    result = ask(agent(embedder), frames({}), script.model())
    assert result.output == ANSWER
    assert script.steps() == ["answer", "confidence"]  # answer, then self-reflection
    meta = result.metadata
    assert (meta["calls"], meta["rounds"], meta["confidences"]) == (2, 1, [3])
    assert meta["stopped"] == "confident"
    # the first look: five frames uniformly over the 21, first and last included
    assert result.usage.retrieved_ids == [f"frame-{n:02d}" for n in (0, 5, 10, 15, 20)]
    assert meta["captioned"] == meta["captions_made"] == 5
    assert result.usage.prompt_tokens == 2 * (INPUT_TOKENS + CACHED_TOKENS)
    assert result.usage.completion_tokens == 2 * OUTPUT_TOKENS
    answer_prompt = script.prompts[0][1]
    assert answer_prompt.count(SURROGATE_LABEL) == 5
    assert "has 21 moments" in answer_prompt and "Where is the kettle?" in answer_prompt


def test_low_confidence_retrieves_from_the_named_segments_for_three_rounds(embedder) -> None:
    # the kettle is at 7 s (segment 2 of the first look: 5-10 s) and again at 17 s; the
    # bicycle at 13 s (segment 4 once 7 s is in: 10-15 s)
    events = frames({7: KETTLE, 13: BICYCLE, 17: KETTLE})
    script = Script(confidence='{"confidence": 1}', queries=[
        '{"frame_descriptions": [{"segment_id": 2, "description": "red kettle in a pantry"}]}',
        '{"frame_descriptions": [{"segment_id": 4, "description": "a blue bicycle"}]}',
    ])
    result = ask(agent(embedder), events, script.model())
    assert script.steps() == ["answer", "confidence", "frames", "answer", "confidence",
                              "frames", "answer"]  # the last answer is not rated
    meta = result.metadata
    assert (meta["calls"], meta["rounds"], meta["confidences"]) == (7, 3, [1, 1])
    assert meta["stopped"] == "rounds"
    assert [(q["segment"], q["frame"]) for q in meta["queries"]] == [
        (2, "frame-07"), (4, "frame-13")]  # inside its segment: never the kettle at 17 s
    assert result.usage.retrieved_ids == [f"frame-{n:02d}" for n in (0, 5, 7, 10, 13, 15, 20)]
    assert meta["captions_made"] == 7  # each frame captioned once, reused by later rounds
    assert result.usage.prompt_tokens == 7 * (INPUT_TOKENS + CACHED_TOKENS)
    assert result.usage.completion_tokens == 7 * OUTPUT_TOKENS
    segments_offered = script.prompts[2][1]
    assert "2: 0:00:05.0 - 0:00:10.0 (4 moments)" in segments_offered
    last = script.prompts[-1][1]
    assert KETTLE in last and BICYCLE in last


def test_a_round_that_finds_no_new_frame_ends_the_loop(embedder) -> None:
    script = Script(confidence='{"confidence": 2}', queries=[
        '{"frame_descriptions": [{"segment_id": 1, "description": "a kettle"}]}',
        '{"frame_descriptions": [{"segment_id": 1, "description": "a kettle"}]}'])
    # three frames: the first look takes all of them, no segment is left to search
    result = ask(agent(embedder), frames({}, count=3), script.model())
    assert script.steps() == ["answer"]
    assert result.metadata["stopped"] == "every frame seen"


def test_future_facts_never_reach_any_prompt(embedder) -> None:
    early = "I put the red kettle in the pantry."
    late = "The zebra key is hidden under the doormat."
    events = [*frames({12: "a zebra key on a doormat"}),
              speech("line-early", 2.0, early), speech("line-late", 10.5, late)]
    everywhere = ", ".join(f'{{"segment_id": {n}, "description": "zebra key doormat"}}'
                           for n in range(1, 7))
    script = Script(confidence='{"confidence": 1}',
                    queries=[f'{{"frame_descriptions": [{everywhere}]}}'] * 2)
    memory = agent(embedder)
    result = ask(memory, events, script.model(), time=10.0)
    assert result.metadata["rounds"] == 3 and len(script.prompts) == 7
    assert all("zebra" not in text.lower() for _, text in script.prompts)
    assert early in script.prompts[0][1]  # heard at 2 s, with the frame at 2 s
    assert all(int(i.split("-")[1]) <= 10 for i in result.metadata["frames"])
    assert "line-early" in result.usage.retrieved_ids  # sent with its frame
    assert "line-late" not in result.usage.retrieved_ids
    ranked = asyncio.run(memory.retrieve("k", "zebra key under the doormat", time=10.0))
    assert ranked and all(i.time is not None and i.time <= 10.0 for i in ranked)
    assert not any("zebra" in i.text for i in ranked)


def test_the_last_words_before_the_question_are_not_lost(embedder) -> None:
    """A line heard after the last frame before the cut joins the next frame, which comes after
    the cut: for this question it is a unit of its own, and the newest one (sampled)."""
    said = "The spare key is in the blue drawer."
    script = Script(confidence='{"confidence": 3}')
    result = ask(agent(embedder), [*frames({}), speech("line-last", 9.5, said)],
                 script.model(), time=9.7)
    assert said in script.prompts[0][1]
    assert result.metadata["frames"][-1] == "line-last"
    assert result.usage.retrieved_ids[-1] == "line-last"


def test_the_streaming_path_answers_as_the_index_path(embedder) -> None:
    events = [*frames({7: KETTLE, 13: BICYCLE}), speech("line-a", 6.5, "kettle talk")]
    queries = ['{"frame_descriptions": [{"segment_id": 2, "description": "a red kettle"}]}'] * 2
    answers = []
    for replay in ("index", "stream"):
        script = Script(confidence='{"confidence": 2}', queries=list(queries))
        memory = make_memory("videoagent", replay=replay, embedder=embedder, ocr=False)
        assert memory is not None and memory.replay == replay
        result = ask(memory, events, script.model(), time=12.0)
        answers.append((result.usage.retrieved_ids, result.metadata["calls"],
                        [text for _, text in script.prompts]))
    assert answers[0] == answers[1]


def test_garbage_replies_are_counted_and_tokens_summed(embedder, scripted, serve) -> None:
    """Through the OpenAI-compatible server: the confidence reply is prose (confidence 1,
    counted), the frames reply is prose too (no new frame: the loop ends with the answer it
    has, counted). The server's own token counts add up to the answer's usage."""
    from inspect_ai.model import get_model

    def reply(prompt: str) -> str:
        if '"confidence"' in prompt:
            return "I would say I am fairly sure about it."
        if "frame_descriptions" in prompt:
            return "Look near the pantry, probably."
        return "The final answer is B"

    server = scripted(answer=reply)
    model = get_model(serve("vagent", server), memoize=False)
    result = ask(agent(embedder), frames({7: KETTLE}), model)
    assert result.output == "The final answer is B" and result.error is None
    meta = result.metadata
    assert meta["unparsed"] == {"confidence": 1, "queries": 1}
    assert (meta["calls"], meta["rounds"], meta["confidences"]) == (3, 1, [1])
    assert meta["stopped"] == "queries not parsed"
    assert len(server.records) == 3
    # the server counts words: prompt words of the last user message, reply words
    replies = [reply(r.prompt) for r in server.records]
    assert result.usage.prompt_tokens == sum(max(1, len(r.prompt.split()))
                                             for r in server.records)
    assert result.usage.completion_tokens == sum(len(text.split()) for text in replies)


def test_ocr_of_the_frames_reaches_their_captions(embedder, reader, text_frame_events) -> None:
    script = Script(confidence='{"confidence": 3}')
    memory = VideoAgentMemory(embedder=embedder, reader=reader, frames=3)
    result = ask(memory, text_frame_events, script.model(), question="Where is the fox?")
    answer_prompt = script.prompts[0][1]
    assert answer_prompt.count(SURROGATE_LABEL) == 3
    assert "red fox" in answer_prompt.lower() and "whale" in answer_prompt.lower()
    assert result.usage.retrieved_ids == [e.id for e in text_frame_events]


# -- end to end ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_runs_through_the_supermemory_task_offline(tmp_path) -> None:
    from m3kit.benchmarks import run_benchmark_task
    from m3kit.schema.evallog import read_record
    from m3kit.synth.ego import EgoSuiteConfig, build_ego_suite

    suite = build_ego_suite(tmp_path / "ego", EgoSuiteConfig(
        seed=0, persons=1, sessions=2, segments=8, answerable_per_skill=1, unanswerable=1))
    log = run_benchmark_task("supermemory", "m3kit/builtin",
                             task_args={"data": str(suite.root), "memory": "videoagent",
                                        "memory_fps": 1.0},
                             log_dir=tmp_path / "logs", cache=False, limit=4)
    assert log.status == "success" and log.samples
    calls = []
    for sample in log.samples:
        record = read_record(sample.metadata)
        events = [e for e in sample.events if e.event == "model"]
        calls.append(len(events))
        # every call of the loop is in the answer's usage
        assert record.usage.prompt_tokens == sum(e.output.usage.input_tokens for e in events
                                                 if e.output.usage)
        assert record.usage.retrieved_ids
        assert sample.output.completion.startswith("Ranking: ")
    # the builtin's self-reflection and frame requests are prose (confidence 1, then no
    # frames to look for): an answer, its rating and one request where frames are left over
    assert all(1 <= n <= 7 for n in calls) and any(n >= 2 for n in calls)
