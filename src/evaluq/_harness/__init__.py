"""Readers of the evaluation harnesses' own logs (Inspect AI, lm-evaluation-harness,
lighteval), each returning a tidy per-item table (lm-eval's aggregated results: a summary
table); public through :mod:`evaluq.io`."""

from evaluq._harness.inspect_logs import read_inspect_logs
from evaluq._harness.lighteval import read_lighteval_details, read_lighteval_results
from evaluq._harness.lm_eval import read_lm_eval_samples
from evaluq._harness.lm_eval_results import read_lm_eval_results

__all__ = ["read_inspect_logs", "read_lighteval_details", "read_lighteval_results",
           "read_lm_eval_results", "read_lm_eval_samples"]
