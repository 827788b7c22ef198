python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 200 python3 -m pytest -q -m gpu tests/test_gpu.py tests/test_gpu_kernels11.py -k "slab or whole_inner or middle_axes or infinities or odd_inner or grid_form or argmax or middle_axis" -n 8 -p no:cacheprovider 2>&1 | tail -2
K="--compile-sizes 64 --repeat 10"
for i in 3 7; do timeout 100 python3 benchmarks/kernels.py --ops softmax_mid --inner $i --rows 21,64,256,1000 --sizes 64 $K --out $OUT/k$i 2>&1 | tail -15; done
