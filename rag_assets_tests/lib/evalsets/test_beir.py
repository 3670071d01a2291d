import shutil

import pytest

from rag_assets.lib.evalsets.beir import load_judgements
from rag_assets.lib.evalsets.queries import EvalSetError
from rag_assets.lib.ingest.beir_corpus import beir_document, is_beir_folder
from rag_assets.lib.ingest.corpus import BEIR_CORPUS, BEIR_EVAL, scan_corpus
from rag_assets.lib.ingest.documents import extract_entry


@pytest.fixture
def beir(tiny_corpus):
    return tiny_corpus.parent / "beir_tiny"


def test_a_beir_folder_has_one_document_file(beir, tiny_corpus):
    assert is_beir_folder(beir) and not is_beir_folder(tiny_corpus)
    formats = {entry.path: entry.format for entry in scan_corpus(beir)}
    assert formats == {"corpus.jsonl": BEIR_CORPUS, "queries.jsonl": BEIR_EVAL, "qrels/test.tsv": BEIR_EVAL,
                       "rationales_test.jsonl": BEIR_EVAL}


def test_corpus_lines_become_documents_and_a_bad_line_fails_alone(beir, tmp_path):
    copy = tmp_path / "beir"
    shutil.copytree(beir, copy)
    with (copy / "corpus.jsonl").open("a") as handle:
        handle.write('{"_id": "d5", "title": "Broken\n')
    entry = next(e for e in scan_corpus(copy) if e.format == BEIR_CORPUS)
    rows = extract_entry(copy, entry.path, entry.format, entry.sha256, 10_000_000)
    assert [(r["doc_id"], r["status"]) for r in rows] == [
        ("d1", "ok"), ("d2", "ok"), ("d3", "ok"), ("d4", "ok"), ("corpus.jsonl#corpus.jsonl:5", "failed")]
    assert rows[-1]["error"].startswith("corpus.jsonl:5: not valid JSON")
    # the title is the heading; the text is the section body
    assert rows[0]["text"].startswith("Vitamin D and bone health\n\nVitamin D increases calcium absorption")
    assert rows[0]["sections"][0]["path"] == "Vitamin D and bone health"
    # a document without a title is titled by its id
    assert rows[3]["title"] == "d4" and rows[3]["text"] == "Walking after meals lowers the rise in blood sugar."


def test_judgements_are_documents_then_evidence_spans(beir):
    queries = {q.query_id: q for q in load_judgements(beir)}
    # q9 has no test judgement; q3's zero-score line for d1 is not a relevance
    assert set(queries) == {"q1", "q2", "q3", "q1:evidence", "q3:evidence"}
    assert queries["q3"].query_kind == "document" and queries["q3"].relevant_doc_ids == ("d3", "d4")
    assert queries["q3:evidence"].query_kind == "needle"
    assert queries["q3:evidence"].spans == (
        ("d3", "Regular aerobic exercise reduces symptoms of mild depression."),
        ("d4", "Walking after meals lowers the rise in blood sugar."))
    assert queries["q1:evidence"].text == queries["q1"].text == "Vitamin D deficiency weakens bones."


def test_malformed_judgements_name_file_and_line(beir, tmp_path):
    copy = tmp_path / "beir"
    shutil.copytree(beir, copy)
    (copy / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\tyes\n")
    with pytest.raises(EvalSetError, match=r"qrels/test.tsv:2: expected query-id, corpus-id and an integer score"):
        load_judgements(copy)
    (copy / "qrels" / "test.tsv").write_text("q7\td1\t1\n")
    with pytest.raises(EvalSetError, match="queries q7 are not in queries.jsonl"):
        load_judgements(copy)
    with pytest.raises(EvalSetError, match="has no qrels/dev.tsv"):
        load_judgements(copy, split="dev")


def test_beir_document_without_id_or_text():
    from rag_assets.lib.ingest.extraction import ExtractionError

    with pytest.raises(ExtractionError, match="no _id"):
        beir_document({"text": "x"}, "c:1")
    with pytest.raises(ExtractionError, match="empty document"):
        beir_document({"_id": "z", "title": " ", "text": ""}, "c:2")
