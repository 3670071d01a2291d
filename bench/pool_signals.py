# ruff: noqa: E701, E702 - an analysis script, kept as it was run
"""Which signals could order `needles label`'s offers better: the pools of one storage folder's evaluation
(`bench/pool_orders.py`'s questions and cached rankings) against every needle-able sentence of the corpus,
each ranked by the pool, by BM25 over the corpus's sentences, by the cosine of the sentence (alone, under its
heading, with 200 characters around it) under all-MiniLM-L6-v2 and by the two other registered models, then
fused by reciprocal rank (k = 10, ties sharing their mean rank). Also: how often the pool holds the needle at
all, and whether ranking only the best N by pool and cosine under their heading changes the order.

    python bench/pool_signals.py HOME CORPUS NEEDLES

Recall at 10 counts a sentence that is the needle, holds it, or is most (40 %+) of a needle of several
sentences. Needs HOME's rankings cached by `bench/pool_orders.py` (/tmp/pool/<home name>.rankings.pkl).
"""
import pickle
import sys
from pathlib import Path

import numpy as np
from scipy.stats import rankdata

from rag_assets.cli.corpus_text import corpus_documents
from rag_assets.lib.embed.models import DEFAULT_MODEL, load_for_asking, registry
from rag_assets.lib.evalsets.pooling import Corpus, Sentence, headed, pool, sentence_spans
from rag_assets.lib.evalsets.queries import load_needles
from rag_assets.lib.evalsets.questions import question_id
from rag_assets.lib.ingest.folding import fold
from rag_assets.lib.retrieve.bm25 import BM25
from rag_assets.lib.store import paths

home = Path(sys.argv[1]); corpus_dir = Path(sys.argv[2]); needles = load_needles(Path(sys.argv[3]))
questions, truth = [], {}
for n in needles:
    for _, text in sorted(n.questions.items()):
        if question_id(text) not in truth: questions.append(text); truth[question_id(text)] = n
rankings = pickle.loads(Path(f"/tmp/pool/{home.name}.rankings.pkl").read_bytes())
corpus = Corpus(corpus_documents(corpus_dir, home))
sentences = [Sentence(d, s, e, text[s:e], corpus.section_at(d, s))
             for d, text in corpus.texts.items() for s, e in sentence_spans(text, 0, len(text))]
sentences = [s for s in sentences if corpus.problem(s) is None]
index = {s: i for i, s in enumerate(sentences)}
print(f"{len(sentences)} needle-able sentences, {len(questions)} questions")


def around(s): t = corpus.texts[s.doc_id]; return " ".join(t[max(0, s.start - 200):s.end + 200].split())


signals = {}
for model in (DEFAULT_MODEL, "paraphrase-MiniLM-L3-v2", "wordllama"):
    embed = load_for_asking(model, registry(""), paths.onnx_dir(home)).embed
    q = np.asarray(embed(questions))
    kinds = {"plain": lambda s: s.text, "headed": headed, "around": around} if model == DEFAULT_MODEL else {"plain": lambda s: s.text}
    for kind, text_of in kinds.items():
        signals[f"{model} {kind}"] = np.asarray(embed([text_of(s) for s in sentences])) @ q.T
bm25 = BM25([s.text for s in sentences])
signals["bm25"] = np.stack([bm25.scores(text) for text in questions], axis=1)
rows = []
for qi, text in enumerate(questions):
    pooled = pool(rankings[question_id(text)], corpus)
    order = [index[s] for s in sorted(pooled, key=lambda s: (-pooled[s][0], s.doc_id, s.start))[:400] if s in index]
    fn = fold(truth[question_id(text)].needle)
    hit = np.array([fn in fold(s.text) or (len(fold(s.text)) > 0.4 * len(fn) and fold(s.text) in fn) for s in sentences])
    score = np.zeros(len(sentences)); score[order] = [pooled[sentences[i]][0] for i in order]
    rows.append((np.array(order), score, hit))


def rr(x): return 1.0 / (10 + rankdata(-np.asarray(x), method="average"))


def recall(fuse, within_pool=True):
    found = 0
    for qi, (order, pool_score, hit) in enumerate(rows):
        candidates = order if within_pool else np.arange(len(sentences))
        fused = fuse(qi, candidates, pool_score[candidates])
        ranked = candidates[np.argsort(-fused, kind="stable")]
        found += bool(hit[ranked[:10]].any())
    return round(found / len(rows), 3)


print("the pool holds the needle:", round(np.mean([hit[order].any() for order, _, hit in rows]), 3))
S = {name: values for name, values in signals.items()}
plain, under, near = S[f"{DEFAULT_MODEL} plain"], S[f"{DEFAULT_MODEL} headed"], S[f"{DEFAULT_MODEL} around"]
for name, fuse, within in [
    ("pool + cosine (0.6.1)", lambda q, c, p: rr(p) + rr(plain[c, q]), True),
    ("pool + cosine + heading (shipped)", lambda q, c, p: rr(p) + rr(plain[c, q]) + rr(under[c, q]), True),
    ("pool + cosine + BM25 over sentences", lambda q, c, p: rr(p) + rr(plain[c, q]) + rr(S["bm25"][c, q]), True),
    ("pool + cosine + 200 characters around", lambda q, c, p: rr(p) + rr(plain[c, q]) + rr(near[c, q]), True),
    ("pool + cosine + paraphrase-MiniLM-L3-v2", lambda q, c, p: rr(p) + rr(plain[c, q]) + rr(S["paraphrase-MiniLM-L3-v2 plain"][c, q]), True),
    ("pool + cosine + both other models", lambda q, c, p: rr(p) + rr(plain[c, q]) + rr(S["paraphrase-MiniLM-L3-v2 plain"][c, q]) + rr(S["wordllama plain"][c, q]), True),
    ("every sentence of the corpus: pool + cosine", lambda q, c, p: rr(p) + rr(plain[c, q]), False),
    ("every sentence of the corpus: cosine alone", lambda q, c, p: plain[c, q], False),
]:
    print(f"{name}: recall@10 {recall(fuse, within)}")
for best in (400, 100, 60, 40):
    def fuse(q, c, p, best=best):
        two = rr(p) + rr(plain[c, q])
        kept = np.argsort(-two, kind="stable")[:best]
        heading = np.full(len(c), -np.inf); heading[kept] = under[c[kept], q]
        return two + rr(heading)
    print(f"the heading's ranking for the best {best} only: recall@10 {recall(fuse)}")
