"""`rlxc.load(path, input_shapes=None)`: a model file as something callable.

    model = rlxc.load("bert.onnx")                  # or a graph-level .mlir
    outs = model(input_ids=ids, attention_mask=mask)  # numpy or device arrays

An initializer the ONNX graph also lists among its inputs is a default a
call may override (as in ONNX Runtime): fed, it is an input of that call's
signature; not fed, it is compiled in as a weight.

`.onnx` files are read once. Each new input-shape signature imports the
in-memory model with those shapes bound (rlx shapes are static, so shape
plumbing folds per signature) and compiles it; later calls with a signature
seen before reuse its executable. A second signature's kernels that the
first already built come from NVRTC's disk cache, so it costs an import and
the lowering, not a recompile of every kernel.

`.mlir` files hold one static signature; their params come from the
`params` argument or, if it is absent, a `.npz` beside the file with the
same stem (what `rlxc import` writes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rlxc.signature import InputError, signature

__all__ = ["Model", "load", "read_mlir"]


def read_mlir(path: str | Path) -> tuple[Any, dict[str, np.ndarray]]:
    """(module, params) of a graph-level `.mlir` file: its params are the
    arrays of the `.npz` beside it with the same stem (what `rlxc import`
    writes), or none."""
    from rlxc.context import parse_module

    path = Path(path)
    beside = path.with_suffix(".npz")
    params: dict[str, np.ndarray] = {}
    if beside.exists():
        with np.load(beside) as data:
            params = {k: data[k] for k in data.files}
    return parse_module(path.read_text(), str(path)), params


def _shape_of(a: Any) -> tuple[int, ...]:
    shape = getattr(a, "shape", None)
    if shape is None:
        shape = np.shape(a)
    return tuple(int(d) for d in shape)


class Model:
    """A loaded model: call it with named arrays (keywords or one mapping);
    it returns the list of outputs, in the graph's order."""

    def __init__(self, path: Path, target: str, params: Mapping[str, np.ndarray] | None,
                 input_shapes: Mapping[str, Sequence[int]] | None, **compile_options: Any):
        self.path = path
        self.target = target
        self.compile_options = compile_options
        self._params = dict(params) if params is not None else None
        self._default_shapes = dict(input_shapes or {})
        self._executables: dict[tuple, Any] = {}
        self.imports = 0  # how many times the importer ran (once per signature)
        if path.suffix == ".onnx":
            from rlxc.frontends.onnx import load_model

            self._onnx = load_model(path)
            self._module = None
            inits = {t.name for t in self._onnx.graph.initializer}
            self.input_names = [i.name for i in self._onnx.graph.input if i.name not in inits]
            # initializers the graph also lists as inputs (ONNX's overridable defaults; older
            # exporters list every weight so): compiled in as weights unless a call feeds them
            self._listed_initializers = {i.name for i in self._onnx.graph.input if i.name in inits}
        else:
            self._onnx = None
            self._listed_initializers = set()
            self._module, beside = read_mlir(path)
            if self._params is None:
                self._params = beside
            self.input_names = [n for n, _ in signature(self._module).inputs]

    def module_for(self, shapes: Mapping[str, Sequence[int]], fed: Sequence[str] = ()):
        """(module, params) for one input-shape signature; `fed`: initializers
        the graph lists among its inputs that this signature takes as inputs
        (overriding their defaults), not as weights."""
        if self._onnx is None:
            return self._module, self._params
        from rlxc.frontends.onnx import from_onnx

        self.imports += 1
        model = self._onnx
        if fed:
            import onnx

            model = onnx.ModelProto()
            model.CopyFrom(self._onnx)
            kept = [t for t in model.graph.initializer if t.name not in fed]
            del model.graph.initializer[:]
            model.graph.initializer.extend(kept)
        try:
            module, params = from_onnx(model, {**self._default_shapes, **shapes})
        except Exception as e:
            if fed:
                e.add_note(f"this call feeds the initializer(s) {', '.join(fed)}: inputs here, not constants "
                           "(fed, an initializer that shape arithmetic reads cannot fold)")
            raise
        if self._params is not None:
            params = {k: v for k, v in self._params.items() if k not in fed}
        return module, params

    def executable(self, shapes: Mapping[str, Sequence[int]], fed: Sequence[str] = ()):
        """The compiled executable for a signature (the inputs' shapes, the
        initializers fed among them: `module_for`), compiling it the first
        time."""
        key = tuple(sorted((n, tuple(s)) for n, s in shapes.items()))
        exe = self._executables.get(key)
        if exe is None:
            from rlxc.driver import compile

            module, params = self.module_for(shapes, fed)
            exe = compile(module, self.target, params=params, **self.compile_options)
            self._executables[key] = exe
        return exe

    def __call__(self, inputs: Mapping[str, Any] | None = None, /, **named: Any) -> list:
        if inputs is not None and not isinstance(inputs, Mapping):
            raise InputError(
                f"{self.path.name}: give the inputs by name, model(name=array, ...) or model({{name: array}}), "
                f"not a {type(inputs).__name__}; the inputs are: " + ", ".join(self.input_names)
            )
        given = {**(inputs or {}), **named}
        # initializers the graph lists among its inputs, fed: they override their defaults (as in
        # ONNX Runtime), so this call's signature takes them as inputs rather than weights
        fed = sorted(n for n in given if n in self._listed_initializers)
        unknown = sorted(set(given) - set(self.input_names) - set(fed))
        if unknown:
            overridable = f"; initializers a call may override: {', '.join(sorted(self._listed_initializers))}" \
                if self._listed_initializers else ""
            raise InputError(
                f"{self.path.name}: unknown input(s) {', '.join(unknown)}; the inputs are: "
                + ", ".join(self.input_names) + overridable
            )
        missing = [n for n in self.input_names if n not in given]
        if missing:
            raise InputError(f"{self.path.name}: missing input(s) {', '.join(missing)}")
        shapes = {n: _shape_of(given[n]) for n in [*self.input_names, *fed]}
        return self.executable(shapes, fed).run(given)

    @property
    def signatures(self) -> list[tuple]:
        """The input-shape signatures compiled so far."""
        return list(self._executables)


def load(path: str | Path, input_shapes: Mapping[str, Sequence[int]] | None = None, *,
         target: str | None = None, params: Mapping[str, np.ndarray] | None = None,
         **compile_options: Any) -> Model:
    """Loads an `.onnx` or graph-level `.mlir` model (see the module docstring).

    `target` is "cuda" or "numpy" (default: cuda where a GPU is present);
    `input_shapes` binds symbolic dimensions for every call that does not
    give an input of that name a different shape; `compile_options` go to
    `rlxc.compile` (mode, allow_tf32, gemm_autotune)."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file")
    if p.suffix not in (".onnx", ".mlir"):
        raise ValueError(f"{p}: rlxc.load reads .onnx and .mlir files, not '{p.suffix}'")
    if target not in (None, "cuda", "numpy"):
        raise ValueError(f"unknown target '{target}': expected 'cuda' or 'numpy'")
    if target is None:
        from rlxc.runtime.driver_api import is_available

        target = "cuda" if is_available() else "numpy"
    return Model(p, target, params, input_shapes, **compile_options)
