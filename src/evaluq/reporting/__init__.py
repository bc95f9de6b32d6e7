"""The analysis report: :func:`report` writes one self-contained HTML page.

:func:`report` runs the analysis (:func:`analyse`) and renders the sections of
:mod:`evaluq.reporting.sections`, each one function of the analysis results, into a page that
opens with no network. ``evaluq report FILE`` on the command line does the same from a results
file and also writes every table (CSV, Markdown, LaTeX) and the cube (NetCDF).

The package is called ``reporting`` so that ``evaluq.report`` can be the function.
"""

from evaluq.reporting import sections
from evaluq.reporting._build import Analysis, Report, analyse, report

__all__ = ["Analysis", "Report", "analyse", "report", "sections"]
