"""``rag-assets gate --baseline HOME``: a pull request's verdict. The working tree's docs evaluated with the
baseline's configurations, then compared with the baseline run (``rag_assets.lib.evaluate.gate``); exit 0, 1 (the
pick dropped significantly at the budget or changed, or the docs lost the answer of a needle) or 2 (usage: nothing evaluated, nothing written)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rag_assets.cli.exit_codes import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from rag_assets.lib.store import paths

SAME_CORPUS = 0.5  # the least share of documents two snapshots of one corpus have in common (Jaccard)


def _refuse(message: str) -> int:
    print(f"rag-assets gate: {message}", file=sys.stderr)
    return EXIT_USAGE


def _inside(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


def gate_command(args: argparse.Namespace, home: Path) -> int:
    import duckdb
    import pyarrow.parquet as pq

    from rag_assets.lib.evalsets.queries import EvalSetError, load_needles, set_version
    from rag_assets.lib.evaluate.gate import compare, junit_xml, read_baseline, summary_markdown
    from rag_assets.lib.ingest.corpus import scan_corpus
    from rag_assets.lib.store.database import damage_of, read_only
    from rag_assets.lib.store.stamps import EXTERNAL_MODEL
    from rag_assets.runner.evaluation import check_names
    from rag_assets.settings import current

    given = Path(args.baseline)
    baseline_home, run = (given, None) if given.is_dir() else (home, args.baseline)
    database = paths.duckdb_path(baseline_home)
    where = f"the baseline {baseline_home}" if run is None else f"the baseline run {run} of {home}"
    if not database.is_file():
        return _refuse(f"{where}: no metrics.duckdb (give a storage folder an evaluation wrote, or a run id of this "
                       "one)")
    damage = damage_of(database)
    if damage:
        return _refuse(f"{where}: metrics.duckdb is damaged ({damage}); nothing was evaluated")
    summary, junit = Path(args.summary or home / "gate" / "summary.md"), Path(args.junit or home / "gate" / "junit.xml")
    if run is None and not _inside(baseline_home, home) and any(_inside(p, baseline_home) for p in (summary, junit)):
        return _refuse(f"--summary and --junit must not be written into the baseline {baseline_home}")
    if run is None and baseline_home.resolve() == home.resolve():
        return _refuse(f"the baseline {baseline_home} is this storage folder: give another (a copy of the main "
                       "branch's), or a run id")
    try:
        with read_only(database) as connection:
            baseline = read_baseline(connection, run)
    except (ValueError, duckdb.Error) as error:
        return _refuse(f"{where}: {error}")
    try:
        load_needles(Path(args.eval_set))  # a needle file the evaluation would refuse: said here, in one line
    except EvalSetError as error:
        return _refuse(str(error))
    version = set_version(Path(args.eval_set))
    if version != baseline.eval_version:
        return _refuse(f"{where} evaluated version {baseline.eval_version} of the evaluation set, and {args.eval_set} "
                       f"is version {version}: a gate compares runs of one version")
    if run is None:
        snapshot = paths.partition_path(baseline_home, "corpus_snapshot")
        if snapshot.is_file():
            before = set(pq.ParquetFile(snapshot).read(columns=["path"]).column("path").to_pylist())
            now = {entry.path for entry in scan_corpus(Path(args.corpus).resolve(), {})}
            shared = len(before & now) / max(1, len(before | now))
            if shared < SAME_CORPUS:
                return _refuse(f"{where} evaluated another corpus: {shared:.0%} of the documents are in both "
                               f"(at least {SAME_CORPUS:.0%} for two snapshots of one corpus)")
    models = sorted({m for m, _ in baseline.configurations if m != EXTERNAL_MODEL and m in _registered(current())})
    strategies = sorted({s for m, s in baseline.configurations if m != EXTERNAL_MODEL})
    if not models:
        return _refuse(f"{where} evaluated no registered embedding model")
    from rag_assets.cli import build_parser
    from rag_assets.cli.runs import evaluate_command
    from rag_assets.runner.failures import UsageError

    try:
        check_names(models, [], current().models_file)
    except UsageError as error:
        return _refuse(f"{where}: {error}")
    evaluation = build_parser(current()).parse_args(
        ["evaluate", "--corpus", args.corpus, "--eval-set", args.eval_set, "--out-of-domain", args.out_of_domain,
         "--models", *models, "--strategies", *strategies])
    evaluation.max_lost_needles = 1.0  # the gate goes on whatever the docs lost, and judges the loss itself
    status = evaluate_command(evaluation, home)
    if status != EXIT_OK:
        return status
    with read_only(paths.stored_database(home)) as connection:
        [(run_id, snapshot_id)] = connection.sql("SELECT run_id, snapshot_id FROM evaluation_runs ORDER BY "
                                                 "created_at DESC, run_id DESC LIMIT 1").fetchall()
        pick = connection.sql("SELECT model, strategy, retriever FROM decision").fetchall()
        result = compare(baseline, connection, run_id, tuple(pick[0]) if pick and pick[0][0] else None, snapshot_id)
    text = summary_markdown(result)
    for path, content in ((summary, text), (junit, junit_xml(result))):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    print("\n" + text + f"\nwrote {summary} and {junit}")
    return EXIT_FAILED if result.failed else EXIT_OK


def _registered(settings) -> set[str]:
    from rag_assets.lib.embed.models import registry

    return set(registry(settings.models_file))
