"""The test suite: one folder per package, the docs checked in test_docs.py."""
