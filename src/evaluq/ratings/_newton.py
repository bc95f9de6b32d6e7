"""Batched Newton fits of Bradley-Terry and Davidson models on pair counts (numpy only).

Every array carries a leading batch axis (the observed data is a batch of one; bootstrap
resamples are a batch of B): ``counts`` (B, P, 3) holds per pair (i, j), i < j, the votes i won,
j won and tied; the parameters are the logit strengths ``theta`` (B, m) and, for Davidson,
``lam = log(nu)`` (B,). Each pair's log-likelihood depends on ``d = theta_i - theta_j`` only
(and ``lam``):

* Bradley-Terry with a tie as half a win each (``"half"``; ``"drop"`` has no ties left):
  ``l = (w + t/2) d - n log(1 + exp(d))``, ``n = w + l + t``;
* Davidson (1970): ``P(i wins) = pi_i / D``, ``P(tie) = nu sqrt(pi_i pi_j) / D``,
  ``D = pi_i + pi_j + nu sqrt(pi_i pi_j)``, ``pi = exp(theta)``; per pair
  ``l = (w - l) d / 2 + t lam - n F``, ``F = log(exp(d/2) + exp(-d/2) + exp(lam))``.

Both are concave (``F`` is a log-sum-exp of linear terms), so Newton's method with step halving
converges to the maximum when it exists (``_checks`` says when it does). The likelihood does
not change when every ``theta`` moves by the same amount: the Newton system is solved with
``H + J`` (``J = 11'/m`` on the ``theta`` block), whose solution is the minimum-norm step, so
the iterates keep ``sum(theta) = 0`` (the sum-zero constraint); a ridge (Gaussian prior of
precision ``ridge`` on each ``theta``) keeps it too.

Covariates (a contextual Bradley-Terry model, style control): the fit's rows are then the
unique (pair, covariate row) combinations, row r with covariates ``z_r`` (q,), and
``d_r = theta_i - theta_j + z_r' beta``; the parameters are ``(theta, [lam], beta)``. The
likelihood is still concave in all of them (``d`` is linear in the parameters), the pair terms
are the same functions of ``d_r``, and the Hessian gains the blocks
``sum_r h_r z_r z_r'`` (beta, beta) and ``sum_r h_r x_r z_r'`` (theta, beta), ``x_r`` the
row's +1 / -1 incidence; the null direction stays ``(1, ..., 1, 0, ...)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

GRADIENT_TOL = 1e-12
"""Convergence: the largest gradient entry of the mean log-likelihood per vote."""
MAX_ITER = 100
MAX_HALVINGS = 40


@dataclass(frozen=True)
class Design:
    """The fit's rows as a signed incidence matrix ``X`` (R, m): +1 at i, -1 at j.

    Without covariates the rows are the pairs (``row_pair`` None); with covariates row r
    belongs to pair ``row_pair[r]`` and has covariates ``features[r]``. Parameters:
    ``theta`` (m), then ``lam`` (Davidson), then ``beta`` (q). ``components`` labels the
    models' groups when the counts' comparison graph falls into several (each group's
    ``theta`` can then move together: ``J`` is ``1_c 1_c' / m_c`` per group ``c``, and Newton
    keeps each group's offset); None: one group.
    """

    pair_i: np.ndarray
    pair_j: np.ndarray
    n_models: int
    davidson: bool
    ridge: float
    row_pair: np.ndarray | None = None
    features: np.ndarray | None = None
    components: np.ndarray | None = None

    @property
    def row_i(self) -> np.ndarray:
        return self.pair_i if self.row_pair is None else self.pair_i[self.row_pair]

    @property
    def row_j(self) -> np.ndarray:
        return self.pair_j if self.row_pair is None else self.pair_j[self.row_pair]

    @property
    def n_rows(self) -> int:
        return int(self.row_i.size)

    @property
    def incidence(self) -> sp.csr_matrix:
        r = self.n_rows
        rows = np.r_[np.arange(r), np.arange(r)]
        vals = np.r_[np.ones(r), -np.ones(r)]
        return sp.csr_matrix((vals, (rows, np.r_[self.row_i, self.row_j])),
                             shape=(r, self.n_models))

    @property
    def n_covariates(self) -> int:
        return 0 if self.features is None else int(self.features.shape[1])

    @property
    def beta(self) -> slice:
        """Where the covariates' coefficients are in the parameter vector."""
        start = self.n_models + int(self.davidson)
        return slice(start, start + self.n_covariates)

    @property
    def n_params(self) -> int:
        return self.n_models + int(self.davidson) + self.n_covariates

    def to_pairs(self, per_row: np.ndarray) -> np.ndarray:
        """Sum a per-row quantity (B, R) over each pair's rows (B, P)."""
        if self.row_pair is None:
            return per_row
        out = np.zeros((per_row.shape[0], self.pair_i.size))
        np.add.at(out.T, self.row_pair, per_row.T)
        return out


@dataclass(frozen=True)
class PairTerms:
    """Per batch and pair: the log-likelihood and its first and second derivatives in
    ``d`` and ``lam`` (``g_*``: gradient of the log-likelihood; ``h_*``: minus its Hessian)."""

    loglik: np.ndarray
    g_d: np.ndarray
    g_lam: np.ndarray
    h_dd: np.ndarray
    h_dl: np.ndarray
    h_ll: np.ndarray


def pair_probabilities(d: np.ndarray, lam: np.ndarray | None) -> tuple[np.ndarray, ...]:
    """P(i wins), P(j wins), P(tie) for logit differences ``d`` (and ``lam`` for Davidson,
    broadcast against ``d``; None: Bradley-Terry, no ties)."""
    if lam is None:
        p = 0.5 * (1.0 + np.tanh(0.5 * d))   # the logistic function, overflow-free
        return p, 1.0 - p, np.zeros_like(p)
    big_f = np.logaddexp(np.logaddexp(0.5 * d, -0.5 * d), lam)
    return np.exp(0.5 * d - big_f), np.exp(-0.5 * d - big_f), np.exp(lam - big_f)


def pair_terms(d: np.ndarray, lam: np.ndarray, counts: np.ndarray, davidson: bool) -> PairTerms:
    """Log-likelihood terms of every pair, batched: ``d`` (B, P), ``lam`` (B,), counts (B, P, 3)."""
    w, lost, t = counts[..., 0], counts[..., 1], counts[..., 2]
    n = w + lost + t
    if not davidson:
        y = w + 0.5 * t
        p, _, _ = pair_probabilities(d, None)
        loglik = (y * d - n * np.logaddexp(0.0, d)).sum(axis=-1)
        zero = np.zeros_like(d)
        return PairTerms(loglik, y - n * p, np.zeros(d.shape[0]), n * p * (1.0 - p), zero,
                         np.zeros(d.shape[0]))
    lam_b = lam[:, None]
    big_f = np.logaddexp(np.logaddexp(0.5 * d, -0.5 * d), lam_b)
    pw, pl, pt = np.exp(0.5 * d - big_f), np.exp(-0.5 * d - big_f), np.exp(lam_b - big_f)
    half_diff = 0.5 * (pw - pl)
    loglik = (0.5 * (w - lost) * d + t * lam_b - n * big_f).sum(axis=-1)
    return PairTerms(
        loglik=loglik,
        g_d=0.5 * (w - lost) - n * half_diff,
        g_lam=(t - n * pt).sum(axis=-1),
        h_dd=n * (0.25 * (pw + pl) - half_diff ** 2),
        h_dl=-n * half_diff * pt,
        h_ll=(n * pt * (1.0 - pt)).sum(axis=-1),
    )


def _covariate_blocks(design: Design, terms: PairTerms, incidence: sp.csr_matrix,
                      hess: np.ndarray) -> np.ndarray:
    """Fill the Hessian's beta blocks; return the gradient in beta (B, q)."""
    z = design.features
    assert z is not None
    batch, q, b, m = terms.h_dd.shape[0], design.n_covariates, design.beta, design.n_models
    zz = (z[:, :, None] * z[:, None, :]).reshape(z.shape[0], q * q)
    hess[:, b, b] = (terms.h_dd @ zz).reshape(batch, q, q)
    weighted = (terms.h_dd[:, :, None] * z[None]).transpose(1, 0, 2).reshape(z.shape[0], -1)
    cross = np.asarray(incidence.T @ weighted).reshape(m, batch, q).transpose(1, 0, 2)
    hess[:, :m, b] = cross
    hess[:, b, :m] = cross.transpose(0, 2, 1)
    if design.davidson:
        h_lb = terms.h_dl @ z
        hess[:, m, b] = h_lb
        hess[:, b, m] = h_lb
    return np.asarray(terms.g_d @ z)


def _assemble(design: Design, x: np.ndarray, terms: PairTerms,
              incidence: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """Gradient (B, K) and minus the Hessian plus ``J`` (B, K, K) in the parameters."""
    m, batch = design.n_models, x.shape[0]
    theta = x[:, :m]
    grad_theta = (incidence.T @ terms.g_d.T).T - design.ridge * theta
    hess = np.zeros((batch, design.n_params, design.n_params))
    h_pair = design.to_pairs(terms.h_dd)
    hess[:, design.pair_i, design.pair_j] = -h_pair
    hess[:, design.pair_j, design.pair_i] = -h_pair
    diag = (abs(incidence).T @ terms.h_dd.T).T + design.ridge
    idx = np.arange(m)
    hess[:, idx, idx] = diag
    if design.components is None:
        hess[:, :m, :m] += diag.mean(axis=1, keepdims=True)[:, :, None] / m
    else:
        group = design.components
        same = (group[:, None] == group[None, :]) / np.bincount(group)[group][:, None]
        hess[:, :m, :m] += diag.mean(axis=1, keepdims=True)[:, :, None] * same
    grads = [grad_theta]
    if design.davidson:
        h_tl = (incidence.T @ terms.h_dl.T).T
        hess[:, :m, m] = h_tl
        hess[:, m, :m] = h_tl
        hess[:, m, m] = terms.h_ll
        grads.append(terms.g_lam[:, None])
    if design.features is not None:
        grads.append(_covariate_blocks(design, terms, incidence, hess))
    return (grads[0] if len(grads) == 1 else np.concatenate(grads, axis=1)), hess


def evaluate(design: Design, x: np.ndarray, counts: np.ndarray) -> PairTerms:
    """The pair terms at parameters ``x`` (B, K)."""
    d = x[:, design.row_i] - x[:, design.row_j]
    if design.features is not None:
        d = d + x[:, design.beta] @ design.features.T
    lam = x[:, design.n_models] if design.davidson else np.zeros(x.shape[0])
    return pair_terms(d, lam, counts, design.davidson)


def gradient_hessian(design: Design, x: np.ndarray,
                     counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gradient and minus the Hessian (with ``J`` on the theta block) at ``x``."""
    return _assemble(design, x, evaluate(design, x, counts), design.incidence)


def start(design: Design, counts: np.ndarray) -> np.ndarray:
    """Equal strengths; for Davidson ``nu`` from the tie share (equal strengths:
    ``P(tie) = nu / (2 + nu)``)."""
    batch = counts.shape[0]
    x = np.zeros((batch, design.n_params))
    if design.davidson:
        ties = counts[..., 2].sum(axis=-1)
        decisive = counts[..., :2].sum(axis=(-2, -1))
        with np.errstate(divide="ignore"):
            x[:, design.n_models] = np.log(2.0 * np.maximum(ties, 0.5) / np.maximum(decisive, 0.5))
    return x


@dataclass
class _State:
    """What each batch member carries between iterations: the last accepted point, its
    log-likelihood and largest scaled gradient, and how often its step has been halved."""

    x: np.ndarray
    accepted: np.ndarray
    accepted_loglik: np.ndarray
    accepted_gmax: np.ndarray
    halvings: np.ndarray
    done: np.ndarray
    converged: np.ndarray

    @classmethod
    def begin(cls, x: np.ndarray) -> _State:
        batch = x.shape[0]
        return cls(x=x, accepted=x.copy(), accepted_loglik=np.full(batch, -np.inf),
                   accepted_gmax=np.full(batch, np.inf), halvings=np.zeros(batch, dtype=int),
                   done=np.zeros(batch, dtype=bool), converged=np.zeros(batch, dtype=bool))


def _take(terms: PairTerms, keep: np.ndarray) -> PairTerms:
    return PairTerms(*(value[keep] for value in vars(terms).values()))


def _backtrack(state: _State, members: np.ndarray) -> None:
    """The step of these members lowered the log-likelihood: halve it (lagged line search:
    the trial point is judged at the next iteration's evaluation, at no extra cost). After
    :data:`MAX_HALVINGS` the last accepted point stays (the floor of floating point)."""
    state.halvings[members] += 1
    give_up = members[state.halvings[members] > MAX_HALVINGS]
    retry = members[state.halvings[members] <= MAX_HALVINGS]
    state.x[retry] = 0.5 * (state.x[retry] + state.accepted[retry])
    state.x[give_up] = state.accepted[give_up]
    state.done[give_up] = True
    state.converged[give_up] = state.accepted_gmax[give_up] <= 1e3 * GRADIENT_TOL


def _newton_step(hess: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """The Newton steps ``H^{-1} g`` (B, K); a member whose Hessian is singular (a model with
    no vote in a bootstrap resample, probabilities that underflow on strengths running off)
    takes the minimum-norm least-squares step instead (its pseudo-inverse), so the fit goes on
    and its caller judges the result (not converged, or strengths running off) rather than
    stopping on a ``LinAlgError``."""
    try:
        return np.asarray(np.linalg.solve(hess, grad[..., None])[..., 0])
    except np.linalg.LinAlgError:
        pass
    step = np.empty_like(grad)
    for k in range(grad.shape[0]):
        try:
            step[k] = np.linalg.solve(hess[k], grad[k])
        except np.linalg.LinAlgError:
            with np.errstate(invalid="ignore", over="ignore"):
                ok = np.isfinite(hess[k]).all()
            step[k] = np.linalg.pinv(hess[k]) @ grad[k] if ok else np.nan
    return step


def _step(design: Design, state: _State, members: np.ndarray, terms: PairTerms,
          value: np.ndarray, n_votes: np.ndarray, incidence: sp.csr_matrix) -> None:
    """Accept the members' current points, stop those at the gradient tolerance, and take a
    full Newton step for the others."""
    grad, hess = _assemble(design, state.x[members], terms, incidence)
    gmax = np.abs(grad).max(axis=1) / n_votes[members]
    state.accepted[members] = state.x[members]
    state.accepted_loglik[members] = value
    state.accepted_gmax[members] = gmax
    state.halvings[members] = 0
    small = gmax <= GRADIENT_TOL
    state.done[members[small]] = True
    state.converged[members[small]] = True
    move = members[~small]
    if move.size:
        step = _newton_step(hess[~small], grad[~small])
        moved = state.x[move] + step
        moved[:, :design.n_models] -= moved[:, :design.n_models].mean(axis=1, keepdims=True)
        state.x[move] = moved


def newton(design: Design, counts: np.ndarray,
           x0: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """Maximise the log-likelihood of every batch member at once.

    Returns the parameters (B, K), whether each member converged (largest gradient entry of
    the mean log-likelihood per vote at most :data:`GRADIENT_TOL`, or at most 1000 times it
    where floating point allows no further ascent) and the iterations run. Only the members
    not yet done are evaluated in each iteration; a step that lowers the log-likelihood is
    halved (monotone ascent).
    """
    state = _State.begin(start(design, counts) if x0 is None else np.array(x0, dtype=float))
    n_votes = np.maximum(counts.sum(axis=(1, 2)), 1.0)
    incidence = design.incidence
    iteration = 0
    while iteration < MAX_ITER and not state.done.all():
        iteration += 1
        active = np.flatnonzero(~state.done)
        terms = evaluate(design, state.x[active], counts[active])
        theta = state.x[active, :design.n_models]
        value = terms.loglik - 0.5 * design.ridge * (theta ** 2).sum(axis=1)
        prev = state.accepted_loglik[active]
        worse = ~(value >= prev - 1e-12 * np.abs(prev))
        _backtrack(state, active[worse])
        _step(design, state, active[~worse], _take(terms, ~worse), value[~worse], n_votes,
              incidence)
    return state.x, state.converged, iteration
