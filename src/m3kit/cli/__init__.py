"""The ``m3kit`` command: thin verbs over the library."""
