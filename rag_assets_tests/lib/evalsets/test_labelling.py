"""Real questions into needles: reading questions, pooling sentences, a session's decisions and outputs,
choices files, and two labellers' agreement (pure logic; the command and the terminal in test_labelling_cli)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rag_assets.lib.evalsets.labelling import (
    SESSION_VERSION,
    LabellingError,
    Session,
    agreement,
    apply_choice,
    choice_problem,
    cohens_kappa,
    read_choices,
    session_problem,
)
from rag_assets.lib.evalsets.pooling import Corpus, headed, offers, pool, sentence_spans
from rag_assets.lib.evalsets.questions import QuestionsError, question_id, read_questions

TEXT = ("Install\n\nThe installer writes its log to the cache folder. Run it twice. "
        "A second run keeps the first log as a backup file.\n\nThe installer writes its log to the cache folder.")
OTHER = "Uninstall\n\nRemoving the package leaves the configuration file in place for the next version."
DOCUMENTS = {"install.md": (TEXT, [{"heading": "Install", "path": "Install", "start": 0, "end": len(TEXT)}]),
             "remove.md": (OTHER, [{"heading": "Uninstall", "path": "Uninstall", "start": 0, "end": len(OTHER)}])}


def test_questions_are_read_from_each_kind_of_file_and_deduplicated(tmp_path):
    (tmp_path / "q.txt").write_text("# exported from the queue\nWhere is the log?\n\n  where is   the LOG?\nHow do I remove it?\n")
    (tmp_path / "q.csv").write_text('ticket,asked\n"Where is the log?",2026-01-01\n"How, exactly?",2026-01-02\n')
    (tmp_path / "q.jsonl").write_text(json.dumps({"text": "Where is the log?"}) + "\n")
    texts = [q.text for q in read_questions(str(tmp_path / "q.txt"))]
    assert texts == ["Where is the log?", "How do I remove it?"]  # case and whitespace folded once
    assert [q.source for q in read_questions(str(tmp_path / "q.txt"))][0].endswith("q.txt:2")
    assert [q.text for q in read_questions(str(tmp_path / "q.csv"), "ticket")] == ["Where is the log?", "How, exactly?"]
    assert read_questions(str(tmp_path / "q.jsonl"), "text")[0].id == question_id("where is the LOG?")
    with pytest.raises(QuestionsError, match="no column 'question'.*ticket, asked"):
        read_questions(str(tmp_path / "q.csv"))
    with pytest.raises(QuestionsError, match=r"q.jsonl:1: no key 'question'"):
        read_questions(str(tmp_path / "q.jsonl"))
    with pytest.raises(QuestionsError, match="needs --query"):
        read_questions("postgresql://u:secret@127.0.0.1:1/db")


def test_questions_are_read_from_the_traces_of_ask(tmp_path):
    import duckdb

    with duckdb.connect(str(tmp_path / "traces.duckdb")) as connection:
        connection.execute("CREATE TABLE ask_traces (asked_at TIMESTAMP, question VARCHAR)")
        connection.execute("INSERT INTO ask_traces VALUES ('2026-01-02', 'second'), ('2026-01-01', 'first'), "
                           "('2026-01-03', 'First')")
    assert [q.text for q in read_questions(str(tmp_path / "traces.duckdb"))] == ["first", "second"]


def test_sentences_are_whole_and_found_in_the_canonical_text():
    spans = sentence_spans(TEXT, 9, 126)
    assert [TEXT[s:e] for s, e in spans] == ["The installer writes its log to the cache folder.", "Run it twice.",
                                             "A second run keeps the first log as a backup file."]


def test_the_pool_fuses_configurations_by_sentence_and_a_sentence_that_cannot_be_a_needle_comes_last():
    corpus = Corpus(DOCUMENTS)
    paragraph = (TEXT.index("The installer"), TEXT.rindex("\n\nThe installer"))
    heading = (0, 7)
    first = [("remove.md", 11, len(OTHER)), ("install.md", *paragraph)]  # two configurations disagree
    second = [("install.md", *paragraph), ("install.md", *heading)]
    pooled = pool([first, second], corpus)
    backup = next(s for s in pooled if s.text.startswith("A second run"))
    assert pooled[backup] == (1 / 12 + 1 / 11, 2)  # rank 2 in one, rank 1 in the other
    made = offers("Where does the backup go?", pooled, corpus, None)
    problems = {o.sentence.text: o.problem for o in made}
    assert problems["The installer writes its log to the cache folder."] == "occurs 2 times in the corpus"
    assert problems["Run it twice."] == "too short to ask about" and problems["Install"] == "too short to ask about"
    assert problems["A second run keeps the first log as a backup file."] is None
    assert [o.problem is None for o in made] == sorted((o.problem is None for o in made), reverse=True)
    assert made[0].sentence.text == "A second run keeps the first log as a backup file."  # pooled by both

    def embed(texts):  # a question about removal is closest to the removal sentence
        return np.array([[1.0, 0.0] if "remov" in t.lower() else [0.0, 1.0] for t in texts])
    made = offers("What does removing leave?", pooled, corpus, embed)
    assert made[0].sentence.doc_id == "remove.md" and made[0].before.endswith("Uninstall")


def test_a_sentence_whose_subject_is_its_heading_is_brought_forward_by_the_heading():
    corpus = Corpus(DOCUMENTS)
    [backup] = [s for s in corpus.sentences("install.md", 0, len(TEXT)) if s.text.startswith("A second run")]
    [removing] = corpus.sentences("remove.md", 11, len(OTHER))
    assert headed(removing) == "Uninstall: Removing the package leaves the configuration file in place for the next version."
    pooled = {backup: (0.1, 1), removing: (0.1, 1)}  # pooled alike: the pool puts install.md first
    embedded = []

    def embed(texts):  # only the word "uninstall" is what the question asks about
        embedded.extend(texts)
        return np.array([[1.0, 0.0] if "uninstall" in t.lower() else [0.0, 1.0] for t in texts])
    made = offers("How do I uninstall?", pooled, corpus, embed)
    assert [o.sentence.doc_id for o in made] == ["remove.md", "install.md"]
    assert [o.cosine for o in made] == [0.0, 0.0]  # the sentences alone say nothing of uninstalling
    assert headed(removing) in embedded and "Install: " + backup.text in embedded


def session(tmp_path, name="a") -> Session:
    made = Session(tmp_path / f"{name}.session.json", [], {}, [], name)
    questions = [{"id": question_id(t), "text": t, "source": "q.txt"} for t in ("Where is the backup?",
                                                                                  "Is there a backup copy?",
                                                                                  "What is the weather?")]
    offer = {"doc_id": "install.md", "start": 77, "end": 127, "text": "A second run keeps the first log as a backup file.",
             "section": "Install", "problem": None, "before": "", "after": ""}
    bad = offer | {"text": "Run it twice.", "problem": "too short to ask about"}
    made.add_questions(questions, {q["id"]: [offer, bad] for q in questions})
    return made


def test_a_session_decides_undoes_resumes_and_writes_files_the_evaluation_accepts(tmp_path):
    from rag_assets.lib.evalsets.checks import phrasing_problems
    from rag_assets.lib.evalsets.queries import load_needles, load_out_of_domain

    labelled = session(tmp_path)
    first, second, third = (q["id"] for q in labelled.questions)
    labelled.decide(first, "needle", labelled.offers[first][0], seconds=10)
    labelled.decide(second, "near")
    assert labelled.undo()["kind"] == "near" and labelled.current()["id"] == second
    labelled.decide(second, "needle", labelled.offers[second][0], seconds=20)
    labelled.decide(third, "off_topic", seconds=6)
    with pytest.raises(ValueError, match="only an offered sentence"):
        labelled.decide(first, "needle", labelled.offers[first][1])
    labelled.phrase(first, "Where is the backup file kept?")
    labelled.save()
    resumed = Session.load(tmp_path / "a.session.json")
    assert resumed.current() is None and resumed.counts() == {"needle": 2, "near": 0, "off_topic": 1, "skip": 0}
    resumed.write_outputs(tmp_path / "n.jsonl", tmp_path / "o.jsonl")
    [needle] = load_needles(tmp_path / "n.jsonl")  # one sentence, two real questions: one needle, two phrasings
    assert needle.questions == {"ticket": "Where is the backup?", "doc": "Where is the backup file kept?",
                                "ticket_2": "Is there a backup copy?"}
    assert needle.origin == "labelled" and phrasing_problems([needle], ("doc", "ticket")) == []
    [(query)] = load_out_of_domain(tmp_path / "o.jsonl")
    assert (query.query, query.kind) == ("What is the weather?", "off_topic")
    assert resumed.seconds_left() == 0


def test_a_choices_file_decides_without_a_person_and_names_the_line_that_does_not_fit(tmp_path):
    labelled = session(tmp_path)
    (tmp_path / "choices.jsonl").write_text("\n".join(json.dumps(c) for c in [
        {"question": "where is the backup?", "choice": 1, "doc": "What does a second run keep?"},
        {"question": "Is there a backup copy?", "sentence": "A second run keeps the first log  as a backup file.",
         "doc": "Where does the  first log go?"},
        {"question": "What is the weather?", "kind": "near"}]) + "\n")
    for choice in read_choices(tmp_path / "choices.jsonl"):
        apply_choice(labelled, choice)
    assert [d["kind"] for d in labelled.decisions] == ["needle", "needle", "near"]
    [needle] = labelled.needle_rows()  # each real question a ticket phrasing, each docs-style one a doc phrasing
    assert needle["questions"] == {"ticket": "Where is the backup?", "doc": "What does a second run keep?",
                                   "ticket_2": "Is there a backup copy?", "doc_2": "Where does the first log go?"}
    labelled.phrase(labelled.decisions[1]["question_id"], "  ")  # taken back
    assert "doc_2" not in labelled.needle_rows()[0]["questions"]
    for bad, said in (({"question": "Unknown?", "choice": 1}, "no such question"),
                      ({"question": "What is the weather?", "choice": 3}, "2 sentences were offered"),
                      ({"question": "What is the weather?", "choice": 2}, "cannot be a needle"),
                      ({"question": "What is the weather?"}, "one of"),
                      ({"question": "What is the weather?", "choice": 1, "doc": 7}, "a string")):
        (tmp_path / "bad.jsonl").write_text(json.dumps(bad) + "\n")
        with pytest.raises(LabellingError, match=said):
            for choice in read_choices(tmp_path / "bad.jsonl"):
                apply_choice(labelled, choice)


def test_cohens_kappa_and_the_disagreements_of_two_labellers(tmp_path):
    assert cohens_kappa([("a", "a"), ("b", "b")]) == 1.0
    assert cohens_kappa([("a", "b"), ("b", "a")]) == -1.0
    assert cohens_kappa([("a", "a"), ("a", "a")]) is None  # one category: chance agreement is 1
    assert cohens_kappa([("y", "y"), ("y", "n"), ("n", "n"), ("n", "n")]) == pytest.approx(0.5)
    first, second = session(tmp_path, "a"), session(tmp_path, "b")
    ids = [q["id"] for q in first.questions]
    for made, kinds in ((first, ["needle", "needle", "near"]), (second, ["needle", "near", "near"])):
        for qid, kind in zip(ids, kinds):
            made.decide(qid, kind, made.offers[qid][0] if kind == "needle" else None)
    found = agreement(first, second)
    assert found["questions"] == 3 and found["both_answered"] == 1 and found["sentence_kappa"] is None
    assert found["answered_kappa"] == pytest.approx(cohens_kappa([("a", "a"), ("a", "n"), ("n", "n")]))
    assert [d["question"] for d in found["disagreements"]] == ["Is there a backup copy?"]


def test_a_dot_inside_a_word_does_not_end_a_sentence():
    text = "A common location is .venv. Call os.path.join to build a path! Done"
    assert [text[s:e] for s, e in sentence_spans(text, 0, len(text))] == [
        "A common location is .venv.", "Call os.path.join to build a path!", "Done"]


def test_a_sentence_is_embedded_once_whatever_the_number_of_questions_that_pool_it():
    from rag_assets.lib.evalsets.pooling import CachedEmbedder

    calls = []

    def embed(texts):
        calls.append(list(texts))
        return np.ones((len(texts), 2))
    cached = CachedEmbedder(embed)
    assert cached(["a", "b", "a"]).shape == (3, 2) and cached(["b", "c"]).shape == (2, 2)
    assert calls == [["a", "b"], ["c"]]


@pytest.mark.parametrize(("record", "said"), [
    ({"question": "q", "choice": 1}, None),
    ({"id": "abc", "kind": "skip"}, None),
    ({"question": "q", "sentence": "The log.", "doc": "where is the log"}, None),
    ({"question": "q"}, "a choice names its question"),
    ({"choice": 1}, "a choice names its question"),
    ({"question": "q", "choice": 1, "kind": "skip"}, "one decision per line: choice and kind"),
    ({"question": "", "choice": 1}, 'question must be a non-empty string, not ""'),
    ({"id": None, "choice": 1}, "id must be a non-empty string, not null"),
    ({"question": "q", "choice": True}, "choice is the offered sentence's number, from 1, not true"),
    ({"question": "q", "choice": 0}, "from 1, not 0"),
    ({"question": "q", "choice": "2"}, 'from 1, not "2"'),
    ({"question": "q", "kind": "maybe"}, 'kind is near, off_topic or skip, not "maybe"'),
    ({"question": "q", "kind": "skip", "doc": 3}, "doc is the question in the documentation's words"),
], ids=["choice", "kind", "sentence", "no-decision", "no-question", "two", "empty", "null", "true", "zero", "text",
        "kind-unknown", "doc-number"])
def test_each_field_of_a_choice_is_checked(record, said):
    found = choice_problem(record)
    assert (found is None) if said is None else (said in found), found


def test_read_choices_names_the_line_of_a_bad_choice_and_refuses_a_binary_file(tmp_path):
    good = tmp_path / "choices.jsonl"
    good.write_text('{"question": "q", "choice": 1}\n\n{"id": "x", "kind": "near"}\n', encoding="utf-8")
    assert [c["where"] for c in read_choices(good)] == [f"{good}:1", f"{good}:3"]
    good.write_text('{"question": "q", "choice": 1}\n{"question": "q", "choice": false}\n', encoding="utf-8")
    with pytest.raises(LabellingError, match=r"choices.jsonl:2: choice is the offered sentence's number"):
        read_choices(good)
    good.write_bytes(b'{"question": "q", "choice": 1}\n\xff\xfe\n')
    with pytest.raises(LabellingError, match="not UTF-8"):
        read_choices(good)
    with pytest.raises(LabellingError, match="does not exist"):
        read_choices(tmp_path / "none.jsonl")


@pytest.mark.parametrize(("data", "said"), [
    ([], "it holds a JSON list"),
    ({"version": 0}, "a session of version 0"),
    ({"version": "SESSION", "questions": "many", "offers": {}, "decisions": []}, "'questions' must be a JSON list"),
    ({"version": "SESSION", "questions": [{"id": 1, "text": "q"}], "offers": {}, "decisions": []},
     "each question is an object with a string 'id' and 'text'"),
    ({"version": "SESSION", "questions": [], "offers": {}, "decisions": [{"question_id": "a", "kind": "maybe"}]},
     "each decision is an object"),
    ({"version": "SESSION", "questions": [], "offers": {}, "decisions": [{"question_id": "a", "kind": "needle"}]},
     "a needle decision's 'sentence' is an object"),
], ids=["list", "version", "questions", "question-id", "decision-kind", "sentence"])
def test_a_session_file_that_is_not_a_session_is_named_with_what_is_wrong(tmp_path, data, said):
    if isinstance(data, dict) and data.get("version") == "SESSION":
        data = data | {"version": SESSION_VERSION}
    path = tmp_path / "out.session.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert said in session_problem(data)
    with pytest.raises(LabellingError, match=str(path)):
        Session.load(path)


def test_a_question_longer_than_the_evaluation_takes_or_not_text_is_refused_naming_its_source():
    from rag_assets.lib.evalsets.queries import MAX_QUESTION_CHARS
    from rag_assets.lib.evalsets.questions import deduplicated

    assert [q.text for q in deduplicated([("a  b", "f:1"), ("A B", "f:2"), ("", "f:3"), (None, "f:4")])] == ["a b"]
    with pytest.raises(QuestionsError, match=r"f:2: the question is 8,001 characters long; at most 8,000") as raised:
        deduplicated([("fine", "f:1"), ("x" * (MAX_QUESTION_CHARS + 1), "f:2")])
    assert raised.value.in_the_input
    with pytest.raises(QuestionsError, match=r"row 3: the question is not text but int"):
        deduplicated([(12, "row 3")])
