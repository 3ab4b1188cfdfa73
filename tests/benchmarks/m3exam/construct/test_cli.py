import json

from m3kit.benchmarks.m3exam import construct
from m3kit.cli.main import main
from m3kit.media.pdf import write_text_pdf
from m3kit.models.backend import DEFAULT_CALL_ATTEMPTS, DEFAULT_CALL_TIMEOUT, CallCount


def write_spec(tmp_path, **overrides):
    spec = {"name": "Alex_Vet", "persona": "Alex, a vet.", "core_event": "Hard cases.",
            "start_date": "2023-09-05", "n_core_events": 3, "n_distractor_events": 1}
    spec.update(overrides)
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    return path


def test_synthesize_writes_a_persona_folder(tmp_path, monkeypatch, capsys, scripted):
    made = {}

    class Backend(scripted):
        def __init__(self, model, *, seed, max_tokens, model_args, max_attempts,
                     attempt_timeout, notify):
            super().__init__()
            made.update(model=model, seed=seed, max_tokens=max_tokens, model_args=model_args,
                        max_attempts=max_attempts, attempt_timeout=attempt_timeout)
            self.call_count = CallCount()

        def close(self):
            made["closed"] = True

    # the model itself is the only stand-in: everything the command wires up runs for real
    monkeypatch.setattr(construct, "InspectBackend", Backend)
    code = main(["m3exam", "synthesize", "--spec", str(write_spec(tmp_path)), "--model",
                 "openai-api/vllm/x", "-M", "temperature_hint=1", "--out", str(tmp_path / "o"),
                 "--seed", "5", "--per-type", "1", "--images-per-event", "0"])
    assert code == 0
    assert made == {"model": "openai-api/vllm/x", "seed": 5, "max_tokens": 2048,
                    "model_args": {"temperature_hint": 1}, "closed": True,
                    "max_attempts": DEFAULT_CALL_ATTEMPTS,
                    "attempt_timeout": DEFAULT_CALL_TIMEOUT}
    captured = capsys.readouterr()
    out = captured.out
    # the calls' summary, on stderr beside the progress bars
    assert "model calls: 0 answered, 0 retried, 0 failed" in captured.err
    assert "4 events" in out and "8 rounds" in out
    folder = tmp_path / "o" / "Alex_Vet"
    questions = json.loads((folder / "question.json").read_text())
    # no images: every type but mr and fm
    assert sorted(q["type"] for q in questions) == ["fj", "ii", "ms", "ss", "th", "tr"]


def test_bad_spec_is_one_line_naming_file_and_field(tmp_path, capsys):
    spec = write_spec(tmp_path, start_date="soon")
    code = main(["m3exam", "synthesize", "--spec", str(spec), "--model", "mockllm/model"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert str(spec) in err and "field 'start_date'" in err


def test_unknown_model_is_one_line(tmp_path, capsys):
    code = main(["m3exam", "synthesize", "--spec", str(write_spec(tmp_path)), "--model",
                 "nosuchprovider/x", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "field 'backend'" in err and "cannot load the model" in err


def test_synthesize_with_a_document_pool(tmp_path, monkeypatch, capsys, scripted):
    class Backend(scripted):
        def __init__(self, model, *, seed, max_tokens, model_args, **call_options):
            super().__init__()
            self.call_count = CallCount()

        def close(self):
            pass

    monkeypatch.setattr(construct, "InspectBackend", Backend)
    docs = tmp_path / "docs"
    docs.mkdir()
    write_text_pdf(docs / "labs.pdf", [f"Hard cases ledger\nPotassium {k}.1 mmol/L"
                                       for k in (3, 4, 5)])
    (docs / "bad.pdf").write_bytes(b"junk")
    code = main(["m3exam", "synthesize", "--spec", str(write_spec(tmp_path)), "--model",
                 "mockllm/model", "--out", str(tmp_path / "o"), "--per-type", "1",
                 "--images-per-event", "0", "--documents", str(docs), "--document-pages", "2",
                 "--no-page-images"])
    captured = capsys.readouterr()
    assert code == 0 and "1 documents" in captured.out
    assert "skipped document" in captured.err and "bad.pdf" in captured.err
    sessions = json.loads((tmp_path / "o" / "Alex_Vet" / "sessions.json").read_text())
    entries = [r["pdf_file"] for s in sessions for r in s["dialogues"] if "pdf_file" in r]
    assert entries == [["labs.pdf#1", "labs.pdf#2"]]
    # no rendered pages were made for a text-only model
    assert not (tmp_path / "o" / "Alex_Vet" / "_synthesis" / "pages").exists()
    questions = json.loads((tmp_path / "o" / "Alex_Vet" / "question.json").read_text())
    # with a document round, mr is supported even without images
    assert "mr" in {q["type"] for q in questions}
