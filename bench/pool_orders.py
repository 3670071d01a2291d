# ruff: noqa: E701, E702 - an analysis script, kept as it was run
"""What orders the pooled sentences of `needles label` best: the pool of one storage folder's evaluation
(`bench/pool_recall.py`'s questions), re-ranked offline by the pool alone, the question's cosine alone, their
reciprocal-rank fusion (what ships) and variants, and with the sentence's section heading in front of it.

    python bench/pool_orders.py HOME CORPUS NEEDLES

Recall at 5 and 10 counts a sentence that is the needle, holds it, or is most (40 %+) of a needle of several
sentences. The pooled rankings are kept in /tmp/pool/<home name>.rankings.pkl between runs.
"""
import pickle
import sys
from pathlib import Path

import numpy as np

from rag_assets.cli.corpus_text import corpus_documents
from rag_assets.lib.answer.pools import pooled_rankings
from rag_assets.lib.embed.models import DEFAULT_MODEL, load_for_asking, registry
from rag_assets.lib.evalsets.pooling import CachedEmbedder, Corpus, pool
from rag_assets.lib.evalsets.queries import load_needles
from rag_assets.lib.evalsets.questions import Question, question_id
from rag_assets.lib.evaluate.measures import stored_configurations
from rag_assets.lib.ingest.folding import fold
from rag_assets.lib.store import paths
from rag_assets.lib.store.database import read_only

home = Path(sys.argv[1]); corpus_dir = Path(sys.argv[2]); needles_file = Path(sys.argv[3])
needles = load_needles(needles_file)
qs, truth = [], {}
for n in needles:
    for p, t in sorted(n.questions.items()):
        if question_id(t) not in truth:
            qs.append(Question(question_id(t), t, p)); truth[question_id(t)] = n
cache = Path(f"/tmp/pool/{home.name}.rankings.pkl")
cache.parent.mkdir(parents=True, exist_ok=True)
if cache.exists():
    rankings = pickle.loads(cache.read_bytes())
else:
    with read_only(home / "metrics.duckdb") as c: conf = stored_configurations(c)
    rankings = dict(pooled_rankings(home, qs, conf, registry(""), paths.onnx_dir(home), 10).rankings)
    cache.write_bytes(pickle.dumps(rankings))
corpus = Corpus(corpus_documents(corpus_dir, home))
embed = CachedEmbedder(load_for_asking(DEFAULT_MODEL, registry(""), paths.onnx_dir(home)).embed)
data = []
for q in qs:
    pooled = pool(rankings[q.id], corpus)
    order = sorted(pooled, key=lambda s: (-pooled[s][0], s.doc_id, s.start))[:400]
    vec = embed([q.text] + [s.text for s in order])
    cos = vec[1:] @ vec[0]
    ok = [corpus.problem(s) is None for s in order]
    fn = fold(truth[q.id].needle)
    hit = [fn in fold(s.text) or (len(fold(s.text)) > 0.4 * len(fn) and fold(s.text) in fn) for s in order]
    data.append((order, np.array([pooled[s][0] for s in order]), np.array([pooled[s][1] for s in order]), cos, np.array(ok), np.array(hit)))
def evaluate(score):
    r10 = r5 = 0
    for order, ps, cnt, cos, ok, hit in data:
        sc = score(ps, cnt, cos)
        idx = [i for i in np.argsort(-sc, kind="stable") if ok[i]]
        rank = next((j for j, i in enumerate(idx, 1) if hit[i]), None)
        r10 += rank is not None and rank <= 10; r5 += rank is not None and rank <= 5
    return r5 / len(data), r10 / len(data)
def rr(x, k):
    ranks = np.empty(len(x)); ranks[np.argsort(-x, kind="stable")] = np.arange(1, len(x) + 1); return 1 / (k + ranks)
for name, f in [("pool only", lambda p, c, s: p), ("cosine only", lambda p, c, s: s),
                ("rrf k10", lambda p, c, s: rr(p, 10) + rr(s, 10)), ("rrf k60", lambda p, c, s: rr(p, 60) + rr(s, 60)),
                ("rrf pool k60 cos k10", lambda p, c, s: rr(p, 60) + rr(s, 10)),
                ("rrf 1:2", lambda p, c, s: rr(p, 10) + 2 * rr(s, 10)),
                ("cos + 0.1 pool norm", lambda p, c, s: s + 0.1 * p / p.max()),
                ("cos + 0.2 pool norm", lambda p, c, s: s + 0.2 * p / p.max()),
                ("cos + 0.3 pool norm", lambda p, c, s: s + 0.3 * p / p.max()),
                ("cos + 0.05 log cnt", lambda p, c, s: s + 0.05 * np.log1p(c))]:
    print(name, evaluate(f))


res = []
for q, (order, ps, cnt, cos, ok, hit) in zip(qs, data):
    v = embed([q.text] + [f"{s.section.split(' > ')[-1] if s.section else ''}: {s.text}" for s in order])
    res.append(v[1:] @ v[0])
def ev(score):
    r10 = r5 = 0
    for (order, ps, cnt, cos, ok, hit), hc in zip(data, res):
        sc = score(ps, cos, hc)
        idx = [i for i in np.argsort(-sc, kind="stable") if ok[i]]
        rank = next((j for j, i in enumerate(idx, 1) if hit[i]), None)
        r10 += rank is not None and rank <= 10; r5 += rank is not None and rank <= 5
    return round(r5 / len(data), 3), round(r10 / len(data), 3)
print("headed cos only", ev(lambda p, c, h: h))
print("rrf pool+headed", ev(lambda p, c, h: rr(p, 10) + rr(h, 10)))
print("rrf pool+cos+headed", ev(lambda p, c, h: rr(p, 10) + rr(c, 10) + rr(h, 10)))
print("rrf cos+headed", ev(lambda p, c, h: rr(c, 10) + rr(h, 10)))
