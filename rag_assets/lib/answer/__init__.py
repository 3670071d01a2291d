"""Asking the latest materialised index a question: a gate that can say no, cited and budgeted
sources, and a trace of every ask."""
