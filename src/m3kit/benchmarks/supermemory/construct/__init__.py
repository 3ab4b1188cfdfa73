"""SuperMemory-VQA's construction: the two-stage annotation pipeline (seed 003 §3.4) that turns a
person's recordings into questions in the released layout. ``records`` is the contract between
the stages and the review app."""
