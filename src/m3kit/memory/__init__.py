"""Memory systems behind one protocol: ingest events per key, answer with usage accounting."""
