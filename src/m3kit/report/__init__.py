"""Eval logs to paper-style tables, plots and an HTML report, and the table ``m3kit eval``
prints.

- ``logs``: the one reader of eval logs (typed ``LoggedSample`` / ``LoggedRun`` records)
- ``inputs``: what a report or a comparison reads: logs, folders of them, score files; the runs
  one system's logs pool into
- ``pooling``: the logs of one system pooled into one run (each sample once, the later wins)
- ``build``: ``build_report``: each benchmark's runs to its declared report sections
- ``html``: the HTML and Markdown writer
- ``summary``: ``m3kit eval``'s headline table, in the run's benchmark's terms
- ``layouts``: ``m3kit report --layout main|cost``: memory runs side by side, ``memory_rows``
  (one row per system: its answer model, its class text-based or multimodal), ``memory_table``
  (the M3Exam paper's main table: per type EM / F1 / BLEU-1 / LLM-J), ``cost_table`` (ingest
  calls, tokens and seconds, index builds, per-question tokens and seconds)
- ``compare``: ``m3kit compare``: two runs of one benchmark on the same questions, paired
  (bootstrap interval and p per headline number, McNemar's test), and ``report --baseline``

Each benchmark's own tables and figures live in its folder (``m3kit.benchmarks.<name>.report``).
"""
