"""The learned scorer: the probability that a paper is about a concept it mentions.

A logistic model over the candidate features of kg.extract.features, fitted on papers with
author keywords (`kg train`). It ships as JSON: feature names, the standardisation (mean, scale)
and the coefficients, so it loads without pickle and is read in a few milliseconds. The score it
gives is a calibrated probability, which is what `--threshold` compares against.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from kg.core.errors import SchemeError
from kg.extract.features import FEATURES
from kg.graph.resources import data_path

MODEL_FORMAT = "kg-logistic-1"


@dataclass(frozen=True)
class Scorer:
    """A fitted logistic model: p = 1 / (1 + exp(-(intercept + coef · (x - mean) / scale)))."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    threshold: float  # the cut that maximised F1 where it was fitted: kg's default --threshold
    trained_on: str = ""

    def probabilities(self, rows: Sequence[Sequence[float]]) -> list[float]:
        """The probability of each feature row (rows in kg.extract.features.FEATURES order)."""
        import numpy as np

        if not rows:
            return []
        x = np.asarray(rows, dtype=np.float64)
        z = ((x - np.asarray(self.mean)) / np.asarray(self.scale)) @ np.asarray(self.coef) + self.intercept
        return (1.0 / (1.0 + np.exp(-z))).tolist()

    def to_json(self) -> str:
        """The model file's text (stable key order, so a re-fit of the same data gives the same bytes)."""
        body = {
            "format": MODEL_FORMAT,
            "features": list(self.features),
            "mean": [round(v, 6) for v in self.mean],
            "scale": [round(v, 6) for v in self.scale],
            "coef": [round(v, 6) for v in self.coef],
            "intercept": round(self.intercept, 6),
            "threshold": round(self.threshold, 3),
            "trained_on": self.trained_on,
        }
        return json.dumps(body, indent=1) + "\n"


def default_model_path() -> Path:
    """The model kg ships (kg/extract/models/scorer.json)."""
    return data_path("models") / "scorer.json"


@lru_cache(maxsize=4)
def load(path: Path | None = None) -> Scorer:
    """Read a model file written by `kg train` (the shipped one when `path` is None)."""
    path = path or default_model_path()
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SchemeError(f"{path}: no such scorer model; train one with `kg train --keywords FILE -o {path.name}`") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SchemeError(f"{path}: not a kg scorer model ({exc.__class__.__name__})") from None
    except RecursionError:
        raise SchemeError(f"{path}: not a kg scorer model (JSON nested too deeply)") from None
    except ValueError as exc:  # e.g. a number of more than 4,300 digits (Python's int conversion limit)
        raise SchemeError(f"{path}: not a kg scorer model (unreadable JSON: {exc})") from None
    if not isinstance(body, dict) or body.get("format") != MODEL_FORMAT:
        raise SchemeError(f"{path}: not a kg scorer model (format must be {MODEL_FORMAT!r})")
    names = tuple(body.get("features", ()))
    if names != FEATURES:
        missing = sorted(set(FEATURES) - set(names)) or sorted(set(names) - set(FEATURES))
        raise SchemeError(f"{path}: the model's features do not match this kg ({', '.join(missing) or 'order differs'}); retrain it with `kg train`")
    try:
        vectors = [tuple(float(v) for v in body[k]) for k in ("mean", "scale", "coef")]
        intercept, threshold = float(body["intercept"]), float(body["threshold"])
    except (KeyError, TypeError, ValueError) as exc:
        raise SchemeError(f"{path}: damaged scorer model ({exc.__class__.__name__}: {exc})") from None
    # NaN or an infinity (Python's json reads NaN, Infinity) would pass every check below and change the links.
    for name, numbers in (*zip(("mean", "scale", "coef"), vectors), ("intercept", (intercept,)), ("threshold", (threshold,))):
        if not all(math.isfinite(v) for v in numbers):
            raise SchemeError(f"{path}: damaged scorer model ({name!r} holds a number that is not finite: NaN or an infinity); "
                              "retrain it with `kg train`")
    if not 0 <= threshold <= 1:
        raise SchemeError(f"{path}: damaged scorer model ('threshold' is {threshold:g}, a probability must be between 0 and 1); "
                          "retrain it with `kg train`")
    if any(len(v) != len(names) for v in vectors) or any(s == 0 for s in vectors[1]):
        raise SchemeError(f"{path}: damaged scorer model (vector lengths or a zero scale)")
    return Scorer(names, vectors[0], vectors[1], vectors[2], intercept, threshold, str(body.get("trained_on", "")))
