"""Generate the demo predictions that ship with evaluq (run once; the output is committed).

Five scikit-learn classifiers, each trained with 5 seeds, on four of scikit-learn's bundled data
sets (no network needed). The data sets play the role of languages. Each data set has one fixed
stratified test split (40%); the seed changes the model's randomness (random forest and MLP
initialisation) and, for every model, which 90% of the training split it is trained on, so
that every model has seed-to-seed variation as training seeds give in practice.

Output: ``src/evaluq/data/demo_predictions.npz`` with, per data set ``d``:
``d/targets`` (item,), ``d/labels`` (model, seed, item), ``d/proba`` (model, seed, item, class)
and the array ``models``.

Usage::

    python scripts/make_demo_data.py
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.ensemble import RandomForestClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

DATASETS = {
    "breast_cancer": load_breast_cancer,
    "digits": load_digits,
    "iris": load_iris,
    "wine": load_wine,
}
SEEDS = range(5)


def make_models(seed: int) -> dict[str, object]:
    return {
        "knn": make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=7)),
        "logreg": make_pipeline(StandardScaler(), LogisticRegression(C=0.5, max_iter=2000)),
        "mlp": make_pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=(16,),
                                                             max_iter=300, random_state=seed)),
        "naive_bayes": GaussianNB(),
        "random_forest": RandomForestClassifier(n_estimators=40, random_state=seed),
    }


def main() -> None:
    out: dict[str, np.ndarray] = {}
    model_names = sorted(make_models(0))
    out["models"] = np.asarray(model_names)
    for name, loader in DATASETS.items():
        X, y = loader(return_X_y=True)
        X_train, X_test, y_train, y_test = train_test_split(
            X, y, test_size=0.4, stratify=y, random_state=0
        )
        n_classes = len(np.unique(y))
        labels = np.zeros((len(model_names), len(SEEDS), len(y_test)), dtype=np.int16)
        proba = np.zeros((len(model_names), len(SEEDS), len(y_test), n_classes), dtype=np.float32)
        for s in SEEDS:
            sub = np.random.default_rng(1000 + s).permutation(len(y_train))
            sub = sub[: int(0.9 * len(y_train))]
            for m, (model_name, model) in enumerate(sorted(make_models(s).items())):
                assert model_name == model_names[m]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    model.fit(X_train[sub], y_train[sub])
                labels[m, s] = model.predict(X_test)
                proba[m, s] = model.predict_proba(X_test)
        out[f"{name}/targets"] = y_test.astype(np.int16)
        out[f"{name}/labels"] = labels
        out[f"{name}/proba"] = proba
        acc = (labels == y_test).mean(axis=-1).mean(axis=-1)
        print(name, len(y_test), "items;", dict(zip(model_names, acc.round(3), strict=True)))
    path = Path(__file__).resolve().parents[1] / "src" / "evaluq" / "data" / "demo_predictions.npz"
    np.savez_compressed(path, **out)
    print("wrote", path, f"{path.stat().st_size / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
