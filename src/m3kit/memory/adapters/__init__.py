"""External memory systems under m3kit's protocol: each adapter runs a released system (its own
package, an optional extra) as a ``Memory`` on the streaming path (``memory.stream``), with
its own model calls sent to OpenAI-compatible endpoints (``endpoints``) and counted
(``usage``). Importing an adapter imports no system: it loads when a memory is built.
"""
