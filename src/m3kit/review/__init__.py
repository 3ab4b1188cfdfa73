"""``m3kit review DIR``: a local web app for human review of what m3kit's builders produce
(seed 003 §3.4 and appendix F; the release's review UI): the media at the evidence's time, the
question, the options with their roles, the evidence and the generator's checks; accept, reject
with a reason, edit; every decision kept beside the data with who and when; the accepted items
exported in the benchmark's released layout and read back by its loader.

    from m3kit.review import open_review, serving
    with serving(open_review(root)) as url:
        ...
"""

from m3kit.review.app import create_app
from m3kit.review.server import DEFAULT_HOST, DEFAULT_PORT, default_reviewer, open_review, serving
from m3kit.review.sources import export_reviewed, open_source
from m3kit.review.store import DecisionStore

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "DecisionStore",
    "create_app",
    "default_reviewer",
    "export_reviewed",
    "open_review",
    "open_source",
    "serving",
]
