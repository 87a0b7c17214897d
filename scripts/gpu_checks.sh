#!/usr/bin/env bash
# The checks that need a GPU, run on the lent device machine (one NVIDIA
# GPU, its own torch, pytest and pytest-xdist, no network) in one call per
# stage: a machine goes back soon after a call, so each stage builds first.
#
#   scripts/gpu_checks.sh tests            # the whole suite (CUDA tests run there)
#   scripts/gpu_checks.sh bench [ARGS...]  # bench_autocast.py on CUDA, float16 then bfloat16
#   scripts/gpu_checks.sh build            # only the build
#
# Builds jitamp in place (setup.py build_ext --inplace) and imports it from
# python/: nothing is pip-installed into the machine's torch. The test
# dependencies it lacks (filecheck, expecttest) travel as wheels in .whl/
# (git-ignored), made here once with
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#     --implementation cp --platform manylinux2014_x86_64 -d .whl filecheck==1.0.6 expecttest==0.3.0
# and named in the device call's `carry`. Logs and JSON go to $OUT (the
# device tool's folder that comes back), else /tmp/jitamp-gpu. ARGS go to
# the benchmark after this script's own (a later --dtype or --repeats wins).
set -uo pipefail

stage=${1:-}
shift || true
case "$stage" in
  build | tests | bench) ;;
  *)
    sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
cd "$(dirname "$0")/.." || exit 1
out=${OUT:-/tmp/jitamp-gpu}
mkdir -p "$out"
export PYTHONUNBUFFERED=1

if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/jitamp-site .whl/*.whl >"$out/wheels.log" 2>&1 || {
    cat "$out/wheels.log"
    exit 1
  }
  export PATH=/tmp/jitamp-site/bin:$PATH
  export PYTHONPATH=/tmp/jitamp-site${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}

python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available(),
      torch.cuda.get_device_name() if torch.cuda.is_available() else "")' | tee "$out/device.txt"
start=$SECONDS
# The lent machine's CXX (/opt/gcc/bin/g++, a wrapper whose -B directory
# holds libstdc++.a alone) linked libstdc++ into jitamp statically: objects
# crossing into LibTorch's libstdc++ crashed at the first refusal
# ("free(): invalid pointer", 2026-11-26). setup.py now refuses such a
# library; the system compiler links it dynamically.
if [ -x /usr/bin/g++ ]; then
  export CXX=/usr/bin/g++
fi
# A lent machine may keep ignored build outputs of an earlier tree (seen:
# objects of another commit, relinked by "ninja: no work to do", crashing
# at the first script): always build from scratch.
rm -rf build python/jitamp/*.so
if ! MAX_JOBS=${MAX_JOBS:-16} python3 setup.py build_ext --inplace >"$out/build.log" 2>&1; then
  tail -40 "$out/build.log"
  echo "build FAILED (log: $out/build.log)"
  exit 1
fi
echo "build OK ($((SECONDS - start)) s)"

case "$stage" in
  build) ;;
  tests)
    workers=()
    if python3 -c 'import xdist' 2>/dev/null; then
      workers=(-n "${JOBS:-16}")
    fi
    python3 -m pytest -q -p no:cacheprovider "${workers[@]}" -rs "$@" 2>&1 | tee "$out/tests.log"
    exit "${PIPESTATUS[0]}"
    ;;
  bench)
    status=0
    for dtype in float16 bfloat16; do
      python3 benchmarks/bench_autocast.py --device cuda --dtype "$dtype" --repeats 11 \
        --json "$out/bench_cuda_$dtype.json" "$@" 2>&1 |
        grep -v '^USDT' | tee "$out/bench_cuda_$dtype.log"
      [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    done
    exit $status
    ;;
esac
