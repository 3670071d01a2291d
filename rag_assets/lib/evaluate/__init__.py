"""Evaluation: the measures computed in DuckDB (``measures``), their intervals (``intervals``), paired
tests (``paired_tests``), the default comparisons, the regression alarm, refusal calibration, the
strategies' costs, the report and its tables, and TREC export."""
