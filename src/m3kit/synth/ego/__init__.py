"""A synthetic egocentric suite in SuperMemory-VQA's released layout (seed 003).

Several persons, one session a day each: rendered videos in which labelled objects are put
down and moved between labelled places, notes are read, chores are done; aligned transcripts
in which "User", "A" and "B" say where to meet, what to bring, what the wearer intends to do;
questions of the six skills with correct, vague and wrong options, and unanswerable ones —
among them facts recorded only *after* the question time, whose leaked answer is a wrong option,
so a memory or model that sees past the causal cut loses points there. Exact ground truth in
``suite.json``.

    from m3kit.synth.ego import EgoSuiteConfig, build_ego_suite
    suite = build_ego_suite()            # small, cached under the m3kit cache
    suite.root                           # a dataset root: data/json/all_qa.json, data/video, ...
"""

from m3kit.synth.ego.config import EGO_SUITE_VERSION, EgoSuiteConfig
from m3kit.synth.ego.questions import QuestionTruth, TruthSpan
from m3kit.synth.ego.suite import (
    EGO_MANIFEST,
    EgoSuite,
    EgoSuiteManifest,
    build_ego_suite,
    default_ego_suite_dir,
    load_ego_suite,
)
from m3kit.synth.ego.world import Fact, PersonWorld, Scene, SessionScript, generate_person

__all__ = [
    "EGO_MANIFEST",
    "EGO_SUITE_VERSION",
    "EgoSuite",
    "EgoSuiteConfig",
    "EgoSuiteManifest",
    "Fact",
    "PersonWorld",
    "QuestionTruth",
    "Scene",
    "SessionScript",
    "TruthSpan",
    "build_ego_suite",
    "default_ego_suite_dir",
    "generate_person",
    "load_ego_suite",
]
