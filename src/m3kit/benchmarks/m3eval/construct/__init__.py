"""M3Eval's construction pipelines (seed 000, §3): source pairing and probe plans (``plan``,
``pairing``), captions and N-Back clip labels from a VLM (``captions``, ``nback_labels``),
question generation with the generation prompts (``generate``, ``prompts``), the rule checker
(``checker``) and the human review sheet (``review``). ``m3kit m3eval build|generate|review``
call these."""
