"""The retrieval floor under the memories: vector and lexical indexes, fusion, passage views,
query rewriting and expansion, hybrid search and reranking.

Nothing here imports the memory protocol or a memory system (``tests/test_layering.py`` checks
it): a memory composes these parts, they never reach up to a memory.
"""
