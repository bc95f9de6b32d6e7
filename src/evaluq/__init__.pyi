"""The public names of evaluq: the one list.

Type checkers read this stub; ``evaluq/__init__.py`` reads it too (its imports, parsed with
``ast``) and loads each name on first use (PEP 562). ``from M import name as name`` is a public
name (in ``__all__``); a plain ``from M import name`` is reachable as an attribute but not
star-exported. A new public name is one line here.
"""

from evaluq._version import __version__ as __version__

# modules and sub-packages
from evaluq import agreement as agreement
from evaluq import cube
from evaluq import dirichlet as dirichlet
from evaluq import errors
from evaluq import experiment  # type: ignore[attr-defined]  # moved: evaluq._moved
from evaluq import field as field
from evaluq import hierarchical as hierarchical
from evaluq import intervals as intervals
from evaluq import io
from evaluq import judges as judges
from evaluq import measurement_error as measurement_error
from evaluq import metrics as metrics
from evaluq import pairwise
from evaluq import plots as plots
from evaluq import power as power
from evaluq import predictions
from evaluq import ranks
from evaluq import ratings as ratings
from evaluq import reporting as reporting
from evaluq import resampling
from evaluq import significance
from evaluq import simulate
from evaluq import small_samples as small_samples
from evaluq import tables as tables
from evaluq import variance
from evaluq.field import bayescomp as bayescomp
from evaluq.field import demsar as demsar
from evaluq.small_samples import proportions as proportions

# functions, classes, warnings
from evaluq.aggregation import aggregate as aggregate
from evaluq.cube import from_arrays as from_arrays
from evaluq.cube import from_long as from_long
from evaluq.cube import from_summary as from_summary
from evaluq.cube import higher_is_better as higher_is_better
from evaluq.cube import is_summary as is_summary
from evaluq.cube import open_cube as open_cube
from evaluq.cube import validate as validate
from evaluq.cube import save_cube as save_cube
from evaluq.errors import ConvergenceWarning as ConvergenceWarning
from evaluq.errors import CubeError as CubeError
from evaluq.errors import EvaluqWarning as EvaluqWarning
from evaluq.errors import HarnessLogWarning as HarnessLogWarning
from evaluq.errors import ImplicitEpochWarning as ImplicitEpochWarning
from evaluq.errors import MissingDataWarning as MissingDataWarning
from evaluq.errors import NotFittedError as NotFittedError
from evaluq.errors import ScaleWarning as ScaleWarning
from evaluq.errors import SmallSampleWarning as SmallSampleWarning
from evaluq.field.bayescomp import BayesianComparison as BayesianComparison
from evaluq.field.bayescomp import bayesian_signed_rank as bayesian_signed_rank
from evaluq.field.bayescomp import correlated_t_test as correlated_t_test
from evaluq.field.bayescomp import hierarchical_t_test as hierarchical_t_test
from evaluq.field.demsar import FriedmanResult as FriedmanResult
from evaluq.field.demsar import critical_difference as critical_difference
from evaluq.field.demsar import friedman_test as friedman_test
from evaluq.field.rliable import interval_estimates as interval_estimates
from evaluq.field.rliable import performance_profile as performance_profile
from evaluq.field.rliable import probability_of_improvement as probability_of_improvement
from evaluq.field.stochastic_order import ASOResult as ASOResult
from evaluq.field.stochastic_order import aso as aso
from evaluq.field.stochastic_order import multi_aso as multi_aso
from evaluq.hierarchical import HierarchicalFit as HierarchicalFit
from evaluq.hierarchical import fit_hierarchical as fit_hierarchical
from evaluq.hierarchical import load_fit as load_fit
from evaluq.io import read_inspect_logs as read_inspect_logs
from evaluq.io import read_lighteval_details as read_lighteval_details
from evaluq.io import read_lighteval_results as read_lighteval_results
from evaluq.io import read_lm_eval_results as read_lm_eval_results
from evaluq.io import read_lm_eval_samples as read_lm_eval_samples
from evaluq.io import read_table as read_table
from evaluq.item_model import ItemFit as ItemFit
from evaluq.item_model import compare_fits as compare_fits
from evaluq.item_model import fit_items as fit_items
from evaluq.item_model import load_item_fit as load_item_fit
from evaluq.item_model import simulate_items as simulate_items
from evaluq.item_stats import item_means as item_means
from evaluq.items import from_items as from_items
from evaluq.items import item_scores as item_scores
from evaluq.judges import JudgedMeansResult as JudgedMeansResult
from evaluq.judges import PPIMeanResult as PPIMeanResult
from evaluq.judges import TransportWarning as TransportWarning
from evaluq.judges import judged_means as judged_means
from evaluq.judges import label_budget as label_budget
from evaluq.judges import ppi_mean as ppi_mean
from evaluq.judges._bayes import JudgeFit as JudgeFit
from evaluq.judges._bayes import fit_judge_model as fit_judge_model
from evaluq.judges._bayes import load_judge_fit as load_judge_fit
from evaluq.pairwise import pairwise_by_language as pairwise_by_language
from evaluq.pairwise import pairwise_differences as pairwise_differences
from evaluq.pairwise import pairwise_table as pairwise_table
from evaluq.predictions import from_predictions as from_predictions
from evaluq.ranks import leaderboard as leaderboard
from evaluq.ranks import rank_distribution as rank_distribution
from evaluq.ranks import significance_groups as significance_groups
from evaluq.ratings import RatingsResult as RatingsResult
from evaluq.ratings import fit_judged_ratings as fit_judged_ratings
from evaluq.ratings import fit_ratings as fit_ratings
from evaluq.ratings._bayes import RatingsFit as RatingsFit
from evaluq.ratings._bayes import compare_ratings_fits as compare_ratings_fits
from evaluq.ratings._bayes import fit_ratings_bayes as fit_ratings_bayes
from evaluq.ratings._bayes import load_ratings_fit as load_ratings_fit
from evaluq.reporting import report as report
from evaluq.resampling import ResamplePlan
from evaluq.resampling import resample as resample
from evaluq.significance import BootstrapTestResult as BootstrapTestResult
from evaluq.significance import bootstrap_test as bootstrap_test
from evaluq.significance.experiment import Experiment as Experiment
from evaluq.significance.experiment import ExperimentResult as ExperimentResult
from evaluq.simulate import simulate_cube as simulate_cube
from evaluq.small_samples.clusters import design_effect as design_effect
from evaluq.small_samples.paired_bayes import bayes_paired_comparison as bayes_paired_comparison
from evaluq.small_samples.pass_k import pass_at_k as pass_at_k
from evaluq.small_samples.pass_k import pass_hat_k as pass_hat_k
from evaluq.small_samples.proportions import mcnemar_test as mcnemar_test
from evaluq.small_samples.proportions import proportion_interval as proportion_interval
from evaluq.variance import variance_components as variance_components
from evaluq.variance import variance_table as variance_table
