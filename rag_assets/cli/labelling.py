"""``rag-assets needles label``, ``needles agree`` and ``needles diagnose``: a team's real questions into
needles, two labellers compared, and the production trace read back (``lib/evalsets/labelling.py``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rag_assets.cli.exit_codes import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from rag_assets.lib.store import paths

MAX_OFFERS = 30  # sentences kept per question that can be needles (and up to 10 that cannot, with why)


def external_askers(configurations, ask: bool, home: Path) -> dict:
    """{external retriever key: how to ask it, None when ``ask`` is False} for the retrievers file's entries
    among the evaluation's ``configurations`` (one no longer registered is absent)."""
    from rag_assets.environment import inherited
    from rag_assets.lib.embed.models import load_for_asking, registry
    from rag_assets.lib.retrieve.external.hits import QueryLimits
    from rag_assets.lib.retrieve.external.retrievers_file import asker
    from rag_assets.lib.retrieve.external.retrievers_file import registry as retrievers
    from rag_assets.lib.store.stamps import EXTERNAL_MODEL
    from rag_assets.settings import current

    settings = current()
    specs = retrievers(settings.retrievers_file)
    limits = QueryLimits(settings.evaluation.external_deadline_seconds, settings.evaluation.external_max_answer_bytes)
    found = {}
    for model, _, key in configurations:
        if model != EXTERNAL_MODEL or key not in specs:
            continue
        if not ask:
            found[key] = None
            continue
        spec = specs[key]
        vectors = spec.embedding_model()  # a store queried by vector: the registered model's query vectors
        embed = (load_for_asking(vectors, registry(settings.models_file), paths.onnx_dir(home)).embed_queries
                 if vectors else None)
        found[key] = asker(spec, embed, inherited(spec.variables()), limits)
    return found


def build_offers(questions, home: Path, corpus: Path, depth: int, progress, ask_external: bool = True,
                 ) -> tuple[dict, list[str], list[str]]:
    """{question id: offer rows} for ``questions``, the configurations pooled and those left out."""
    from rag_assets.cli.corpus_text import corpus_documents
    from rag_assets.lib.answer.pools import pooled_rankings
    from rag_assets.lib.embed.models import DEFAULT_MODEL, load_for_asking, registry
    from rag_assets.lib.evalsets.pooling import CachedEmbedder, Corpus, offers, pool
    from rag_assets.lib.evaluate.measures import stored_configurations
    from rag_assets.lib.store.database import read_only
    from rag_assets.settings import current

    database = paths.stored_database(home)
    if not database.exists():
        raise LookupError(f"no evaluation at {database} to pool from: run `rag-assets evaluate` first")
    with read_only(database) as connection:
        configurations = stored_configurations(connection)
    models = registry(current().models_file)
    documents = corpus_documents(corpus, home)
    found = pooled_rankings(home, questions, configurations, models, paths.onnx_dir(home), depth, progress,
                            external_askers(configurations, ask_external, home),
                            {doc_id: text for doc_id, (text, _) in documents.items()})
    embed = CachedEmbedder(load_for_asking(DEFAULT_MODEL, models, paths.onnx_dir(home)).embed)
    corpus_index = Corpus(documents)
    made = {}
    for question in questions:
        offered = offers(question.text, pool(found.rankings.get(question.id, []), corpus_index, depth), corpus_index,
                         embed)
        good = [o for o in offered if o.problem is None][:MAX_OFFERS]
        made[question.id] = [o.row() for o in good + [o for o in offered if o.problem is not None][:10]]
    return made, found.configurations, found.left_out


def label_command(args: argparse.Namespace, home: Path) -> int:
    from rag_assets.lib.evalsets.labelling import LabellingError, Session, apply_choice, read_choices
    from rag_assets.lib.evalsets.questions import QuestionsError, read_questions

    out = Path(args.out)
    out_of_domain = Path(args.out_of_domain or out.with_name(out.stem + ".out_of_domain.jsonl"))
    session_path = out.with_name(out.name + ".session.json")
    try:  # every input file is read before anything is pooled: a bad line is told at once
        choices = read_choices(Path(args.choices)) if args.choices else None
        session = Session.load(session_path) or Session(session_path, [], {}, [], args.labeller)
    except LabellingError as error:
        print(f"rag-assets needles label: {error}", file=sys.stderr)
        return EXIT_USAGE
    try:
        questions = read_questions(args.questions, args.field, args.query)
    except QuestionsError as error:
        print(f"rag-assets needles label: {error}", file=sys.stderr)
        return EXIT_USAGE if error.in_the_input else EXIT_FAILED
    if not questions:
        print(f"rag-assets needles label: {args.questions} holds no question", file=sys.stderr)
        return EXIT_FAILED
    known = {q["id"] for q in session.questions}
    new = [q for q in questions if q.id not in known]
    if new:
        try:
            offers, configurations, left_out = build_offers(new, home, Path(args.corpus), args.depth,
                                                            lambda line: print(f"rag-assets: {line}", flush=True),
                                                            not args.without_external)
        except LookupError as error:
            print(f"rag-assets needles label: {error}", file=sys.stderr)
            return EXIT_FAILED
        session.configurations, session.left_out = configurations, left_out
        session.add_questions([{"id": q.id, "text": q.text, "source": q.source} for q in new], offers)
        session.save()
    if args.labeller:
        session.labeller = args.labeller
    print(f"{len(session.questions)} questions ({len(new)} new), {len(session.decisions)} decided; pooled from "
          f"{len(session.configurations)} configurations" + (f" (not asked: {'; '.join(session.left_out)})"
                                                              if session.left_out else ""))
    if choices is not None:
        try:
            for choice in choices:
                apply_choice(session, choice)
        except LabellingError as error:  # the choices file names what the session does not hold
            print(f"rag-assets needles label: {error}", file=sys.stderr)
            return EXIT_USAGE
        session.save()
        session.write_outputs(out, out_of_domain)
    else:
        from rag_assets.cli.labelling_screen import label_in_terminal

        label_in_terminal(session, out, out_of_domain)
    counts = session.counts()
    print(f"{len(session.needle_rows())} needles from {counts['needle']} questions written to {out}; "
          f"{counts['near'] + counts['off_topic']} not answered by this corpus ({counts['near']} near, "
          f"{counts['off_topic']} off-topic) to {out_of_domain}; {counts['skip']} skipped; "
          f"{len(session.questions) - len(session.decisions)} open (run the command again to go on). "
          f"Next: `rag-assets needles check {out}`, then evaluate with eval_set = {out.name!r} and "
          f"out_of_domain = {out_of_domain.name!r}.")
    return EXIT_OK


def agree_command(args: argparse.Namespace, home: Path) -> int:
    from rag_assets.lib.evalsets.labelling import LabellingError, Session, agreement

    try:
        sessions = [Session.load(Path(path)) for path in (args.first, args.second)]
    except LabellingError as error:
        print(f"rag-assets needles agree: {error}", file=sys.stderr)
        return EXIT_USAGE
    missing = [path for path, session in zip((args.first, args.second), sessions) if session is None]
    if missing:
        print(f"rag-assets needles agree: no labelling session at {', '.join(missing)}", file=sys.stderr)
        return EXIT_FAILED
    found = agreement(*sessions)
    if args.format == "json":
        print(json.dumps(found, indent=2, ensure_ascii=False))
        return EXIT_OK

    def kappa(value) -> str:
        return "undefined (one category only)" if value is None else f"{value:.3f}"

    print(f"{found['questions']} questions decided by both (skips left out)")
    print(f"answered / not answered: Cohen's kappa {kappa(found['answered_kappa'])}"
          + (f", {found['answered_agreement']:.0%} agree" if found["answered_agreement"] is not None else ""))
    print(f"the sentence, where both answered ({found['both_answered']}): Cohen's kappa {kappa(found['sentence_kappa'])}"
          + (f", {found['sentence_agreement']:.0%} agree" if found["sentence_agreement"] is not None else ""))
    for number, disagreement in enumerate(found["disagreements"], 1):
        print(f"{number}. {disagreement['question']}\n   first:  {disagreement['first']}\n   second: {disagreement['second']}")
    return EXIT_OK


def _own_traces(traces: Path, home: Path, by_question: dict) -> tuple[int, list]:
    """The traces of ``ask`` (``traces.duckdb``) against the needles: how many rows, and the diagnoses."""
    import duckdb

    from rag_assets.lib.answer.diagnosis import diagnose
    from rag_assets.lib.ingest.folding import fold

    with duckdb.connect(str(traces), read_only=True) as connection:
        rows = connection.sql("SELECT * FROM ask_traces ORDER BY asked_at").to_arrow_table().to_pylist()
    contents: dict[str, dict[str, str]] = {}
    found = []
    for row in rows:
        needle = by_question.get(fold(row["question"]).lower())
        if needle is None:
            continue
        if row["strategy"] not in contents:
            chunks = paths.stored_partition(home, "chunks", [("strategy", row["strategy"])])
            contents[row["strategy"]] = dict(zip(*paths.read_stored(
                chunks, "chunks", [("strategy", row["strategy"])]).select(["chunk_id", "content"]).to_pydict().values())
                ) if chunks.is_file() else {}
        found.append(diagnose(row, needle, contents[row["strategy"]]))
    return len(rows), found


def _team_traces(url: str, query: str, chunks_query: str, by_question: dict) -> tuple[int, list]:
    """A team's trace table and chunk table in its PostgreSQL against the needles."""
    from rag_assets.lib.answer.diagnosis import diagnose_retrieved
    from rag_assets.lib.ingest.folding import fold
    from rag_assets.lib.store.team_database import TeamDatabaseError, named_rows

    if not query or not chunks_query:
        raise TeamDatabaseError("a PostgreSQL trace table needs --query (columns question, retrieved, and "
                                "optionally cited and asked_at) and --chunks-query (columns id and text)")
    rows = named_rows(url, query, ("question", "retrieved"))
    texts = {str(row["id"]): row["text"] or "" for row in named_rows(url, chunks_query, ("id", "text"))}
    keys = [fold(row["question"] or "").lower() for row in rows]
    found = [diagnose_retrieved(row, by_question[key], texts) for row, key in zip(rows, keys) if key in by_question]
    return len(rows), found


def diagnose_command(args: argparse.Namespace, home: Path) -> int:
    import duckdb

    from rag_assets.lib.answer.diagnosis import needles_by_question, sides
    from rag_assets.lib.answer.traces import traces_path
    from rag_assets.lib.evalsets.queries import EvalSetError, load_needles
    from rag_assets.lib.formats.markdown import markdown_table
    from rag_assets.lib.store.team_database import TeamDatabaseError, is_postgres_url

    traces = args.traces or str(traces_path(home))
    try:
        by_question = needles_by_question(load_needles(Path(args.eval_set)))
        if is_postgres_url(traces):
            count, found = _team_traces(traces, args.query, args.chunks_query, by_question)
        else:
            count, found = _own_traces(Path(traces), home, by_question)
    except (EvalSetError, TeamDatabaseError, duckdb.Error) as error:
        print(f"rag-assets needles diagnose: {str(error).splitlines()[0]}", file=sys.stderr)
        return EXIT_FAILED
    counts = sides(found)
    if args.format == "json":
        print(json.dumps({"traces": count, "with_needle": len(found), "sides": counts,
                          "diagnoses": [d.__dict__ for d in found]}, indent=2, ensure_ascii=False, default=str))
        return EXIT_OK
    print(f"{len(found)} of {count} traced questions have a needle in {args.eval_set}")
    print(markdown_table([("asked at", lambda d: d.asked_at[:19]), ("question", lambda d: d.question[:70]),
                          ("needle", lambda d: d.needle_id), ("strategy", lambda d: d.strategy),
                          ("side", lambda d: d.side), ("rank", lambda d: d.rank or "-")], found))
    print("\n" + "; ".join(f"{side}: {number}" for side, number in counts.items() if number))
    return EXIT_OK
