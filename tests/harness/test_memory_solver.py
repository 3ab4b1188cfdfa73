"""The memory solver: frames ingested once per memory key, answers see only the past, and the
memory's cost lands in the sample record."""

from __future__ import annotations

from typing import Any

from m3kit.benchmarks import run_benchmark_task
from m3kit.benchmarks.m3eval.score import sample_results
from m3kit.benchmarks.m3eval.task import m3eval_task
from m3kit.memory.base import AnswerRequest, Memory, MemoryAnswer, MemoryEvent, MemoryItem
from m3kit.report.logs import read_samples
from m3kit.schema import Usage


class FrameListMemory(Memory):
    """Keeps every frame; answers with the model, telling it how many frames it may see."""

    name = "frame_list"

    def __init__(self) -> None:
        super().__init__()
        self.builds: list[str] = []
        self.queries: dict[str, str] = {}  # prompt -> the query the memory was given

    def config(self) -> dict[str, Any]:
        return {"keep": "all"}

    async def _build(self, key: str, events: list[MemoryEvent]) -> list[MemoryItem]:
        self.builds.append(key)
        return [MemoryItem(id=e.id, key=key, event_id=e.id, modality="frame", text="",
                           source=e.media, time=e.time) for e in events]

    async def _answer(self, key: str, items: list[MemoryItem],
                      request: AnswerRequest) -> MemoryAnswer:
        self.queries[request.prompt] = request.query
        output = await request.model.generate(
            f"{len(items)} frames remembered.\n{request.prompt}", cache=request.cache
        )
        usage = Usage(prompt_tokens=output.usage.input_tokens,
                      completion_tokens=output.usage.output_tokens,
                      retrieved_ids=[i.id for i in items])
        return MemoryAnswer(output=output.completion, usage=usage)


def test_memory_ingests_once_and_respects_time(tmp_path, scripted, serve, make_q, probe_video):
    server = scripted()
    model = serve("mem", server)
    qs = [make_q(0, probe_video, time=1.0), make_q(1, probe_video, time=2.0),
          make_q(2, probe_video)]
    memory = FrameListMemory()
    task = m3eval_task(qs, name="mem", memory=memory, frames=8)
    log = run_benchmark_task(task, model, log_dir=tmp_path / "logs", max_connections=3)

    assert log.status == "success"
    assert memory.builds == [str(probe_video)]  # one key, one build, three questions
    by_id = {r.answer.id: r for r in sample_results(read_samples(log))}
    assert all(r.answer.status == "correct" for r in by_id.values())
    retrieved = {qid: r.usage.retrieved_ids for qid, r in by_id.items()}
    times = {item.id: item.time for item in memory.items(str(probe_video))}
    assert len(times) == 8
    assert all(times[i] <= 1.0 for i in retrieved["q0"]) and len(retrieved["q0"]) == 2
    assert all(times[i] <= 2.0 for i in retrieved["q1"]) and len(retrieved["q1"]) == 4
    assert len(retrieved["q2"]) == 8
    assert all(r.usage.index_build_seconds > 0 for r in by_id.values())
    sample = log.samples[0]
    assert sample.metadata["m3kit"]["memory"] == "frame_list"
    prompts = {r.key: r.prompt for r in server.records}
    assert prompts["q0"].startswith("2 frames remembered.\nWhat colour was the box? qid=q0")
    assert {r.images for r in server.records} == {0}  # this memory sends text only
    # the memory retrieves with the bare question, not the prompt's instructions and choices
    assert sorted(memory.queries.values()) == [q.text for q in qs]
    for prompt, query in memory.queries.items():
        assert prompt != query and query in prompt and "red" in prompt and "red" not in query
