"""ONNX front end: `from_onnx(model, input_shapes=None) -> (module, params)`.

An ONNX graph becomes a `func.func @main` of rlx ops through `GraphBuilder`.

* Symbolic dimensions are bound from `input_shapes` (`{"input_ids": [1, 128]}`);
  one left unbound is an error naming the input and the dimension.
* Initializers become `rlx.param`s under their ONNX names (the arrays are
  returned in `params`) where a runtime op reads them, and stay import-time
  constants where only shape arithmetic does.
* Everything computable at import is folded there: a node whose inputs are
  all constants runs through the numpy interpreter (one definition of each
  op's semantics) on a scratch graph, and shape plumbing (Shape, Size,
  ConstantOfShape, Range) is plain numpy, so the module is fully static.
* The importer is a table, `EMITTERS`: ONNX op type (and the opset from
  which a form holds) -> a small function that emits rlx ops through the
  builder, one module per family (`elementwise`, `reductions`, `matmul`,
  `attention`, `recurrent`, `loops`, `sampling`, `spectral`, `shape`, `spatial`,
  `constants`, `quantize`, and `qlinear` for ONNX Runtime's com.microsoft
  quantized ops, keyed `com.microsoft:<op>`); `core` holds what they share and
  `importer` the walk. An op type, attribute value or dtype it
  does not support is an `OnnxImportError` naming the op type, the node and
  what is supported; nothing is approximated.
* Each result keeps its ONNX value name as its SSA name, so the IR and an
  error point back to the node.
"""

from rlxc.frontends.onnx import (  # noqa: F401 - registers the emitters
    attention,
    constants,
    contrib,
    elementwise,
    loops,
    matmul,
    qlinear,
    quantize,
    recurrent,
    reductions,
    sampling,
    shape,
    spatial,
    spectral,
)
from rlxc.frontends.onnx.core import (
    EMITTERS,
    IMPORT_TIME_INPUTS,
    IMPORT_TIME_OPS,
    ONNX_DTYPES,
    Const,
    Emitter,
    Node,
    OnnxImportError,
    Value,
    _const_from_tensor,
    emitter,
    emitter_for,
    import_time_inputs,
)
from rlxc.frontends.onnx.importer import OnnxImporter, from_onnx, load_model

__all__ = [
    "EMITTERS", "IMPORT_TIME_INPUTS", "IMPORT_TIME_OPS", "ONNX_DTYPES", "Const", "Emitter", "_const_from_tensor",
    "Node", "OnnxImportError", "OnnxImporter", "Value", "emitter", "emitter_for",
    "from_onnx", "import_time_inputs", "load_model",
]  # fmt: skip
