"""The GP-LVM baselines the paper quotes, rerun through GPy: the GP-LVM (Lawrence 2005) and the
back-constrained GP-LVM (Lawrence & Quinonero-Candela 2006), 2-D maps of a dataset as its
Diffeomap fits see it (:func:`.data.prepare`).

Model. The data Y (m x D), centred and divided by ``data_scale``, are D independent GPs over
the latent points X (m x 2):

    log p(Y | X) = sum_d log N(y_d | 0, K + sigma^2 I),
    K_ij = s^2 exp(-||x_i - x_j||^2 / (2 l^2)) + b          (RBF plus bias)

(the white-noise term sigma^2 is GPy's Gaussian likelihood), maximised in X, s^2, l, b and
sigma^2; the map is X. No prior on X (the authors' toolbox adds a unit Gaussian one; GPy's
back-constrained model has no place for it, so neither model takes it). ``inducing`` 0:
the exact GP (``GPy.models.GPLVM``); M > 0: Titsias' variational lower bound with M inducing
inputs, optimised with them (``SparseGPLVM``, GPy's VarDTC; its FITC fails GPy's own
gradient check for more than one output column).

Back constraint. X = g(Y), the likelihood maximised in g's parameters, so points near in the
data stay near in the map (``GPy.models.BCGPLVM``; :class:`SparseBCGPLVM` wires GPy's
SparseGPLVM the same way): ``mlp``, g(y) = W2 tanh(W1 y + b1) + b2 with ``mlp_hidden`` units
(``GPy.mappings.MLP``); ``rbf``, g(y) = sum_j a_j exp(-gamma/2 ||y - y_j||^2) over the data
points y_j, gamma = ``rbf_inverse_width`` fixed (``GPy.mappings.Kernel``, Lawrence's "kbr").

Start. X0 = the first two principal components of Y, each of unit variance (GPy's
``initialize_latent("PCA")``); a back constraint is first fitted to X0 by least squares
(``back_init_iters`` L-BFGS iterations for the MLP, a linear solve for the kernel mapping), so
both models start from the PCA map. Kernel start: s^2 = 1, l = 1, b = sigma^2 = exp(-2), the
toolbox's defaults. GPy draws its random numbers (MLP weights, the inducing inputs, a subset
of X0) from numpy's global generator, seeded with ``seed`` before the model is built.
"""

from __future__ import annotations

import time
from typing import Any

import GPy
import numpy as np
from GPy.util.initialization import initialize_latent
from scipy.optimize import minimize

from embedlab.experiments.diffeomap.data import prepare
from embedlab.experiments.diffeomap.scoring import class_errors
from embedlab.experiments.diffeomap.settings import BcGplvmSettings, GplvmSettings

#: the map's dimension (the paper's b = 2)
LATENT_DIM = 2
#: the kernel's start: RBF variance s^2 and lengthscale l, bias b, noise sigma^2
KERNEL_START = {"variance": 1.0, "lengthscale": 1.0, "bias": float(np.exp(-2)),
                "noise": float(np.exp(-2))}  # fmt: skip


class SparseBCGPLVM(GPy.models.SparseGPLVM):
    """GPy's sparse GP-LVM with its latent points tied to a mapping of the data, X = g(Y),
    as ``GPy.models.BCGPLVM`` ties the exact one's: the bound's gradient in X (through the
    diagonal of K_nn and K_nm) is passed on to g's parameters by ``g.update_gradients``."""

    def __init__(self, Y: np.ndarray, mapping, kernel, num_inducing: int):
        super().__init__(Y, mapping.output_dim, X=mapping.f(Y), kernel=kernel,
                         num_inducing=num_inducing)  # fmt: skip
        self.unlink_parameter(self.X)
        self.mapping = mapping
        self.link_parameter(self.mapping)
        self.X = self.mapping.f(self.Y)

    def parameters_changed(self):
        self.X = self.mapping.f(self.Y)
        GPy.models.SparseGPRegression.parameters_changed(self)
        dL_dX = self.kern.gradients_X_diag(self.grad_dict["dL_dKdiag"], self.X)
        dL_dX += self.kern.gradients_X(self.grad_dict["dL_dKnm"], self.X, self.Z)
        self.mapping.update_gradients(dL_dX, self.Y)


def kernel() -> Any:
    """RBF plus bias over the 2-D latent space, at :data:`KERNEL_START`."""
    rbf = GPy.kern.RBF(LATENT_DIM, variance=KERNEL_START["variance"],
                       lengthscale=KERNEL_START["lengthscale"])  # fmt: skip
    return rbf + GPy.kern.Bias(LATENT_DIM, variance=KERNEL_START["bias"])


def back_mapping(Y: np.ndarray, back: BcGplvmSettings) -> Any:
    """The back constraint g: R^D -> R^2 that ``back.back_constraint`` names."""
    if back.back_constraint == "mlp":
        return GPy.mappings.MLP(Y.shape[1], LATENT_DIM, hidden_dim=back.mlp_hidden)
    if back.back_constraint == "rbf":
        lengthscale = 1.0 / np.sqrt(back.rbf_inverse_width)
        rbf = GPy.kern.RBF(Y.shape[1], variance=1.0, lengthscale=lengthscale)
        return GPy.mappings.Kernel(Y.shape[1], LATENT_DIM, Z=np.array(Y), kernel=rbf)
    raise ValueError(f"back_constraint={back.back_constraint!r}; expected 'mlp' or 'rbf'")


def fit_mapping(mapping, Y: np.ndarray, X0: np.ndarray, max_iter: int) -> float:
    """g's parameters set to minimise 0.5 ||g(Y) - X0||^2 (the start of a back-constrained
    model); returns the rms distance of g(Y) from X0. The kernel mapping is linear in A
    (g(Y) = K_YZ A): a least-squares solve; the MLP: L-BFGS, ``max_iter`` iterations."""
    if isinstance(mapping, GPy.mappings.Kernel):
        K = mapping.kern.K(Y, mapping.Z)
        mapping.A[:] = np.linalg.lstsq(K, X0, rcond=None)[0]
    else:

        def loss(theta):
            mapping.optimizer_array = theta
            residual = mapping.f(Y) - X0
            mapping.update_gradients(residual, Y)
            gradient = mapping._transform_gradients(mapping.gradient.copy())
            return 0.5 * float(np.sum(residual**2)), gradient

        start = mapping.optimizer_array.copy()
        result = minimize(loss, start, jac=True, method="L-BFGS-B",
                          options={"maxiter": max_iter})  # fmt: skip
        mapping.optimizer_array = result.x
    return float(np.sqrt(np.mean((mapping.f(Y) - X0) ** 2)))


def method_of(settings: GplvmSettings | BcGplvmSettings) -> str:
    """"bc_gplvm" for a back constraint's settings, else "gplvm"."""
    return "bc_gplvm" if isinstance(settings, BcGplvmSettings) else "gplvm"


def build_model(Y: np.ndarray, settings: GplvmSettings | BcGplvmSettings) -> tuple[Any, dict]:
    """The GPy model (back-constrained for :class:`.settings.BcGplvmSettings`) of Y as it is
    fitted, at its start; (model, facts about the start). GPy draws from numpy's global
    generator: seeded here with ``settings.seed``."""
    np.random.seed(settings.seed)  # noqa: NPY002 - GPy reads only the global generator
    X0, _ = initialize_latent("PCA", LATENT_DIM, Y)
    sparse = settings.inducing > 0
    facts: dict[str, Any] = {}
    if isinstance(settings, GplvmSettings):
        model = (
            GPy.models.SparseGPLVM(Y, LATENT_DIM, X=X0, kernel=kernel(),
                                   num_inducing=settings.inducing)  # fmt: skip
            if sparse
            else GPy.models.GPLVM(Y, LATENT_DIM, X=X0, kernel=kernel())
        )
    elif isinstance(settings, BcGplvmSettings):
        mapping = back_mapping(Y, settings)
        rms = fit_mapping(mapping, Y, X0, settings.back_init_iters)
        facts["start_rms_from_pca"] = round(rms, 6)
        model = (
            SparseBCGPLVM(Y, mapping, kernel(), settings.inducing)
            if sparse
            else GPy.models.BCGPLVM(Y, LATENT_DIM, kernel=kernel(), mapping=mapping)
        )
    else:
        raise TypeError(f"{type(settings).__name__}: not a GP-LVM's settings")
    model.likelihood.variance = KERNEL_START["noise"]
    return model, facts


def latent(model) -> np.ndarray:
    """The map: the latent points (a back-constrained model's g(Y))."""
    if hasattr(model, "mapping"):
        return np.array(model.mapping.f(model.Y), dtype=np.float64)
    return np.array(model.X, dtype=np.float64)


def gplvm_map(
    X: np.ndarray, settings: GplvmSettings | BcGplvmSettings
) -> tuple[np.ndarray, dict]:
    """(the 2-D map of the rows of X, facts of the fit): the model fitted by GPy from the PCA
    start, ``settings.max_iter`` iterations of ``settings.optimizer``. A non-finite map or a
    failed factorisation is an error naming the method and the settings."""
    method = method_of(settings)
    Y = (X - X.mean(axis=0)) / settings.data_scale
    t0, c0 = time.perf_counter(), time.process_time()
    model, facts = build_model(Y, settings)
    try:
        model.optimize(settings.optimizer, max_iters=settings.max_iter, messages=False)
    except np.linalg.LinAlgError as exc:
        raise ValueError(f"{method} ({settings}): GPy's factorisation failed: {exc}") from exc
    Z = latent(model)
    if not np.isfinite(Z).all():
        raise ValueError(f"{method} ({settings}): the map has non-finite points")
    run = model.optimization_runs[-1]
    rbf, bias = model.kern.parts
    facts.update(
        log_likelihood=round(float(-model.objective_function()), 4),
        status=str(run.status),
        evaluations=int(run.funct_eval),
        lengthscale=round(float(rbf.lengthscale[0]), 6),
        rbf_variance=round(float(rbf.variance[0]), 6),
        bias_variance=round(float(bias.variance[0]), 6),
        noise_variance=round(float(model.likelihood.variance[0]), 6),
        seconds=round(time.perf_counter() - t0, 2),
        cpu_seconds=round(time.process_time() - c0, 2),
    )
    return Z, facts


def gplvm_file(
    artifact_dir, settings: GplvmSettings | BcGplvmSettings, dataset: str
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """(arrays, info) of a GP-LVM file, laid out as a baselines file
    (:func:`.baselines.baseline_maps`): ``map_<method>`` and ``rows``; info ``{"meta",
    "runs"}``, its one run with the map's 1-NN errors, the settings in ``params`` and the
    fit's facts (:func:`gplvm_map`)."""
    preparation = settings.preparation
    X, classes, info = prepare(artifact_dir, preparation, settings.seed)
    method = method_of(settings)
    Z, facts = gplvm_map(X, settings)
    errors, n_labelled = class_errors(Z, classes)
    unused = {"mlp": {"rbf_inverse_width"}, "rbf": {"mlp_hidden", "back_init_iters"}}
    skip = {"seed", "preparation"} | unused.get(getattr(settings, "back_constraint", ""), set())
    params = {name: getattr(settings, name) for name in settings.field_names() if name not in skip}
    run = {"method": method, "errors": errors, "n_labelled": n_labelled,
           "seconds": facts["seconds"], "params": params, "fit": facts}  # fmt: skip
    meta = {"dataset": dataset, "seed": settings.seed, "subsample": preparation.subsample,
            "pca_dims": preparation.pca_dims}  # fmt: skip
    arrays = {f"map_{method}": Z, "rows": np.asarray(info.pop("rows"), dtype=np.int64)}
    return arrays, {"meta": {**meta, **info}, "runs": [run]}
