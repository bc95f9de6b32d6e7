"""Tests of the hierarchical model (a package, so its test modules share ``paired_sim``)."""
