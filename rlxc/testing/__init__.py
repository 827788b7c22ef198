"""What tests and `rlxc fuzz` share: hypothesis strategies for random valid
graphs (`strategies`: rlx graphs through the GraphBuilder; `onnx_graphs`:
small ONNX models through onnx.helper). Hypothesis is a test dependency, so
nothing imports this package at start-up; import its modules where it is
installed."""
