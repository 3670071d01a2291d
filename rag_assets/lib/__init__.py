"""Pure logic of rag_assets: no dagster import anywhere under this package."""
