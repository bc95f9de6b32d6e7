"""A log-density fused with its gradient, as one PyTensor Op: the base of the item model's
grid kernels (``_gridquad``, ``_bb_grid``, ``_ordinal_grid``, ``_twopl_grid``).

A kernel returns the value and, in the same pass, its gradient in each differentiable input;
the Op's outputs are (value, gradient of each). Its ``pullback`` multiplies the value's
output gradient by them (the data inputs have none), so PyTensor's own autodiff carries them
on to the model's parameters. The gradient outputs have no gradient of their own: NUTS needs
first derivatives only. Each module still registers its numba implementation (a wrapper of
fixed arity around its kernel, with the module's source hash in the numba cache key).
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

import numpy as np
import pytensor.tensor as pt
from pytensor.gradient import DisconnectedType, grad_undefined
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op

INT: Final = "int32"
"""The dtype of the integer inputs (``FusedLoglik.INTS``): ``pm.Data``'s."""


class FusedLoglik(Op):
    """Outputs a log-density and its gradient in the inputs at ``DIFFERENTIABLE``.

    A subclass names its inputs (``NAMES``), their dimensions (``NDIM``), the integer ones
    (``INTS``, int32: what ``pm.Data`` holds, so the compiled graph passes them as they are
    stored; cast to int64 on every call, as they were before, the ordinal family's term rows
    cost ~10% of its sampling at 20 models x 10^4 items x 5 epochs; the rest are float64),
    the differentiable ones in output order
    (``DIFFERENTIABLE``, indices of ``NAMES``) and :meth:`compute` (the kernel on numpy
    arrays, returning the value and those gradients).
    """

    __props__ = ()
    NAMES: ClassVar[tuple[str, ...]] = ()
    NDIM: ClassVar[tuple[int, ...]] = ()
    INTS: ClassVar[tuple[str, ...]] = ()
    DIFFERENTIABLE: ClassVar[tuple[int, ...]] = ()

    def compute(self, *arrays: np.ndarray) -> tuple[Any, ...]:
        """The kernel: (value, gradient in each ``DIFFERENTIABLE`` input)."""
        raise NotImplementedError(f"{type(self).__name__} defines its kernel call")

    def make_node(self, *inputs: Any) -> Apply:
        tensors = []
        for name, value, ndim in zip(self.NAMES, inputs, self.NDIM, strict=True):
            var = pt.as_tensor_variable(value).astype(INT if name in self.INTS
                                                      else "float64")
            if var.ndim != ndim:
                raise ValueError(f"{name} must have {ndim} dimensions, got {var.ndim}")
            tensors.append(var)
        grads = [pt.tensor(dtype="float64", shape=(None,) * self.NDIM[i])
                 for i in self.DIFFERENTIABLE]
        return Apply(self, tensors, [pt.dscalar(), *grads])

    def perform(self, node: Apply, inputs: Any, output_storage: Any) -> None:
        arrays = [np.asarray(v, dtype=INT if name in self.INTS else np.float64)
                  for name, v in zip(self.NAMES, inputs, strict=True)]
        arrays = [np.ascontiguousarray(a) if a.ndim else a for a in arrays]
        for store, value in zip(output_storage, self.compute(*arrays), strict=True):
            store[0] = np.asarray(value, dtype=np.float64)

    def infer_shape(self, node: Apply, shapes: Any) -> list[Any]:
        return [(), *(shapes[i] for i in self.DIFFERENTIABLE)]

    def pullback(self, inputs: Any, outputs: Any, output_grads: Any) -> list[Any]:
        if any(not isinstance(og.type, DisconnectedType) for og in output_grads[1:]):
            raise NotImplementedError("the gradient outputs have no gradient of their own")
        g = output_grads[0]
        grads = dict(zip(self.DIFFERENTIABLE, outputs[1:], strict=True))
        return [g * grads[i] if i in grads
                else grad_undefined(self, i, inputs[i], "data, not differentiated")
                for i in range(len(inputs))]
