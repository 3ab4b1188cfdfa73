"""The synthetic probe suite: scripted source videos with exact ground truth, composed into
M3Eval's four paradigms (divided attention, memory interference, interleaved events, N-back),
with questions in two evidence variants — answerable from on-screen text, or from pixels only.

    from m3kit.synth import SuiteConfig, build_suite
    suite = build_suite("m3kit-synth", SuiteConfig.small())
    suite.questions        # schema.Question records, media paths absolute
"""

from m3kit.synth.errors import SynthError
from m3kit.synth.nback import NBackClip, NBackTrial, clip_script, design_trials
from m3kit.synth.questions import (
    BENCHMARK,
    ProbeContext,
    false_memory_questions,
    interference_questions,
    nback_questions,
    source_memory_questions,
    storyline_questions,
)
from m3kit.synth.render import render_script
from m3kit.synth.script import (
    Actor,
    Event,
    Scene,
    SceneSpan,
    SourcePair,
    VideoScript,
    generate_pair,
    generate_script,
)
from m3kit.synth.suite import PARADIGMS, Suite, SuiteConfig, SuiteManifest, build_suite, load_suite

__all__ = [
    "BENCHMARK",
    "PARADIGMS",
    "Actor",
    "Event",
    "NBackClip",
    "NBackTrial",
    "ProbeContext",
    "Scene",
    "SceneSpan",
    "SourcePair",
    "Suite",
    "SuiteConfig",
    "SuiteManifest",
    "SynthError",
    "VideoScript",
    "build_suite",
    "clip_script",
    "design_trials",
    "false_memory_questions",
    "generate_pair",
    "generate_script",
    "interference_questions",
    "load_suite",
    "nback_questions",
    "render_script",
    "source_memory_questions",
    "storyline_questions",
]
