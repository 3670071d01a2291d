"""Where outputs live and what they hold: the storage folder's paths, the object store, the Parquet
schemas of every stage, and the build stamps that make mixing builds an error."""
