"""The benchmark harness's building blocks (see bench/README.md, "Layout")."""
