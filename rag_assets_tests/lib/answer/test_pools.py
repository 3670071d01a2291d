"""An external retriever of the evaluation pooled as the evaluation judged it: asked each question, its passages
located in the corpus; one that fails, returns text found nowhere, is left out or is no longer registered is
said so."""

from __future__ import annotations

from pathlib import Path

from rag_assets.lib.answer.pools import pooled_rankings
from rag_assets.lib.evalsets.questions import Question
from rag_assets.lib.retrieve.external.hits import Hit, QueryFailed

DOCUMENTS = {"a.md": "Intro.\n\nThe backup file keeps the first log. Nothing else is kept.",
             "b.md": "Removing the package leaves the configuration in place."}
QUESTIONS = [Question("q1", "Where is the first log?", "q.txt:1"), Question("q2", "What stays after removal?", "q.txt:2"),
             Question("q3", "Is this asked?", "q.txt:3")]


def team_store(query: str, k: int) -> list[Hit]:
    if query.startswith("Is this"):
        raise QueryFailed("HTTP 503")
    return [Hit("The backup  file keeps\nthe first log."), Hit("a passage from another corpus"),
            Hit("Removing the package leaves the configuration in place.", doc_id="b.md")][:k]


def test_an_external_retriever_is_asked_and_its_passages_located_and_what_was_not_pooled_is_said():
    configurations = [("external", "-", "team"), ("external", "-", "paid"), ("external", "-", "gone")]
    found = pooled_rankings(Path("/nonexistent"), QUESTIONS, configurations, {}, Path("/nonexistent"), 10,
                            external={"team": team_store, "paid": None},
                            documents=DOCUMENTS)
    start = DOCUMENTS["a.md"].index("The backup")
    assert found.rankings["q1"] == [[("a.md", start, start + len("The backup file keeps the first log.")),
                                     ("b.md", 0, len(DOCUMENTS["b.md"]))]]
    assert found.rankings["q3"] == [[]]  # failed: a miss, as in the evaluation
    assert found.configurations == ["external: team"]
    assert found.left_out == ["external retriever team: 1 of 3 questions failed, 2 passages found nowhere in the corpus",
                              "external retriever paid (left out)", "external retriever gone (not in the retrievers file)"]
    depth_one = pooled_rankings(Path("/nonexistent"), QUESTIONS[:1], configurations[:1], {}, Path("/nonexistent"), 1,
                                external={"team": team_store}, documents=DOCUMENTS)
    assert depth_one.rankings["q1"] == [[("a.md", start, start + 36)]]  # the retriever asked for the depth only
