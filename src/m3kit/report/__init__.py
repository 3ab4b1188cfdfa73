"""Eval logs to paper-style tables, plots and an HTML report."""
