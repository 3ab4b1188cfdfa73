"""Second-stage reranking: the listwise model reranker, and the first-stage fallback, counted,
whenever a reranker fails (a real ``RagMemory`` over MiniLM + FTS5; mockllm as the model)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from m3kit.memory import MemoryEvent, RagMemory
from m3kit.memory.retrieval.config import RetrievalConfig
from m3kit.memory.retrieval.rerank import (
    FIRST_STAGE,
    ModelReranker,
    RerankError,
    RerankStage,
    listwise_prompt,
    merged_order,
    parse_passage_numbers,
    positional_scores,
)
from m3kit.schema.prediction import Usage

HITS = [("a", 0.9), ("b", 0.8), ("c", 0.7), ("d", 0.6)]
TEXTS = {"a": "alpha text", "b": "beta text", "c": "gamma text", "d": "delta text"}


def _model(reply: str) -> tuple[Any, list[str]]:
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    prompts: list[str] = []

    def respond(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        prompts.append(messages[-1].text)
        output = ModelOutput.from_content(model="mockllm", content=reply)
        output.usage = ModelUsage(input_tokens=50, output_tokens=5)
        return output

    return get_model("mockllm/model", custom_outputs=respond, memoize=False), prompts


class Raising:
    name = "raising"

    async def rerank(self, query: str, candidates: Sequence[tuple[str, str]]
                     ) -> tuple[list[str], Usage]:
        raise RuntimeError("reranker down")


def test_positional_scores_and_merge_by_hand() -> None:
    assert positional_scores(["x", "y", "z", "w"]) == [("x", 1.0), ("y", 0.75), ("z", 0.5),
                                                     ("w", 0.25)]
    assert merged_order(["c", "zz", "c", "a"], ["a", "b", "c"]) == ["c", "a", "b"]


def test_parse_passage_numbers() -> None:
    assert parse_passage_numbers("Ranking: [3, 1, 3, 9]", 3) == [3, 1]
    assert parse_passage_numbers("2 then 1", 3) == [2, 1]
    with pytest.raises(RerankError, match="names no passage"):
        parse_passage_numbers("I cannot rank these.", 3)


def test_model_reranker_reorders_the_head_and_counts_its_tokens() -> None:
    model, prompts = _model("[3, 1]")
    stage = RerankStage(ModelReranker(model), depth=3)
    out = asyncio.run(stage.apply("which is gamma?", HITS, TEXTS))
    # the model named c then a; b keeps its place after them; d was beyond the depth
    assert [i for i, _ in out] == ["c", "a", "b", "d"]
    assert [s for _, s in out] == [1.0, 0.75, 0.5, 0.25]
    assert "[1] alpha text" in prompts[0] and "[3] gamma text" in prompts[0]
    assert "[4]" not in prompts[0]
    assert stage.report() == {"reranker": "model:mockllm/model", "depth": 3, "calls": 1,
                              "fallbacks": {}, "prompt_tokens": 50, "completion_tokens": 5}


@pytest.mark.parametrize(("reranker", "reason"), [
    (Raising(), "RuntimeError"),
    (ModelReranker(_model("Sorry, I can't help.")[0]), "RerankError"),
])
def test_a_failing_reranker_falls_back_to_the_first_stage_counted(reranker, reason) -> None:
    stage = RerankStage(reranker, depth=3)
    out = asyncio.run(stage.apply("q", HITS, TEXTS))
    assert [i for i, _ in out] == ["a", "b", "c", "d"]  # the first stage's order
    asyncio.run(stage.apply("q", HITS, TEXTS))
    assert stage.fallbacks == {f"{FIRST_STAGE}:{reason}": 2} and stage.calls == 2


def test_listwise_prompt_shape() -> None:
    prompt = listwise_prompt("Who?", ["one\n two", "x" * 2000])
    assert "Question: Who?" in prompt and "[1] one two" in prompt
    assert len(prompt.splitlines()[4]) < 800  # a passage is cut


def test_memory_with_a_failing_reranker_keeps_its_first_stage(embedder) -> None:
    events = [MemoryEvent(id=f"e{n}", kind="text", time=float(n), text=text) for n, text in
              enumerate(["the parrot plucks feathers", "gloves for the clinic",
                         "the rabbit stopped eating hay", "hay brands for rabbits"])]
    plain = RagMemory(embedder=embedder, k=3, ocr=False)
    failing = RagMemory(embedder=embedder, k=3, ocr=False,
                        retrieval=RetrievalConfig(reranker=Raising()))
    named = RagMemory(embedder=embedder, k=3, ocr=False,
                      retrieval=RetrievalConfig(reranker="mockllm/model"))
    question = "Why did the rabbit stop eating hay?"
    rankings = []
    for memory in (plain, failing, named):
        asyncio.run(memory.ingest("vet", events))
        rankings.append([i.id for i in asyncio.run(memory.retrieve("vet", question))])
    assert rankings[0] == rankings[1] == rankings[2] and rankings[0][0] == "e2"
    assert failing.rerank_stage is not None
    assert failing.rerank_stage.fallbacks == {"first-stage:RuntimeError": 1}
    assert failing.config()["reranker"] == "raising"
    # a model named by string (memory_config is JSON): mockllm's default reply names no passage
    assert named.rerank_stage is not None and named.rerank_stage.calls == 1
    assert named.config()["reranker"] == "model:mockllm/model"
