"""What every benchmark shares on inspect-ai; no benchmark of its own.

- ``run``: ``run_eval`` (preflight, m3kit's defaults, resume, the run lock), behind ``m3kit eval``
- ``taskargs``: a task's ``-T`` arguments checked (types, declared ranges) and the task built
  before a run (the benchmarks' declarations look tasks up by name)
- ``solvers``: ``direct_solver`` (a benchmark's message to the model) and ``memory_solver``
  (media ingested into a memory once per key, the memory answers with the causal cut), and the
  ``FrameSelector`` both draw frames from
- ``sample_state``: the steps around one sample (time, ask, record, fail) and the memory a
  solver answers from (``resolve_memory``, ``answer_from_memory``)
- ``frames``: frame policies, selection with the causal cut, image content
- ``preflight``: ``check_model`` (missing key / unreachable server / rejected key, one line)
- ``responses_api``: ``openai/<name>`` against a server without the Responses API (the
  preflight's probe, the one-line fix, a sample failure recognised as it)
- ``runlock``: the lock that keeps ``--resume`` off a run that is still going
- ``failures``: failed samples counted by reason (a run where all failed is an error)
- ``cache``, ``endpoint``, ``defaults``, ``skips``: the response cache scope, where a model's
  requests go, run defaults, loader skips

Most modules import inspect-ai; this package's ``__init__`` imports nothing, so naming it is
cheap.
"""
