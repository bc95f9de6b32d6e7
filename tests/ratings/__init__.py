"""Tests of the pairwise-vote ratings (``evaluq.ratings``)."""
