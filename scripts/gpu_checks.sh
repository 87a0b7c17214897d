#!/usr/bin/env bash
# The checks that need a GPU, run on the lent device machine (one NVIDIA
# GPU, its own torch, pytest and pytest-xdist, no network) in one call per
# stage: a machine goes back soon after a call, so each stage builds first.
#
#   scripts/gpu_checks.sh tests            # the whole suite (CUDA tests run there)
#   scripts/gpu_checks.sh bench [ARGS...]  # bench_autocast.py on CUDA, float16 then bfloat16
#   scripts/gpu_checks.sh fuzz             # the fuzzer with CUDA tensors (FUZZ_SECONDS, FUZZ_SEED)
#   scripts/gpu_checks.sh build            # only the build
#   scripts/gpu_checks.sh tests,bench,fuzz # several stages after one build, in turn
#
# TESTS_TIMEOUT (default 300) and BENCH_TIMEOUT (per dtype, default 300)
# bound the stages in seconds, so one that hangs leaves the others time.
# Seen on an H200 (2026-11-27), one call: the build, 150 s of tests, both
# bench dtypes (BENCH_REPEATS=5, each within BENCH_TIMEOUT=80) and 110 s of
# fuzzing (45 programs/s) took 510 s; the suite needed more than 4 min
# (with 16 threads per worker, since set to 1). Again (2026-11-28, one
# thread per worker): the build 47 s, and the suite had reached 99% when
# TESTS_TIMEOUT=250 stopped it: give the tests stage alone a call of 400 s.
# No more than 8 files come back from a call: all stages together write 8.
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

stages=${1:-}
shift || true
for stage in ${stages//,/ }; do
  case "$stage" in
    build | tests | bench | fuzz) ;;
    *)
      sed -n '2,/^set -uo/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'
      exit 2
      ;;
  esac
done
[ -n "$stages" ] || { sed -n '2,/^set -uo/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
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
  rm -f "$out/wheels.log"
  export PATH=/tmp/jitamp-site/bin:$PATH
  export PYTHONPATH=/tmp/jitamp-site${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}

python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available(),
      torch.cuda.get_device_name() if torch.cuda.is_available() else "")' | tee "$out/build.log"
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
if ! MAX_JOBS=${MAX_JOBS:-16} python3 setup.py build_ext --inplace >>"$out/build.log" 2>&1; then
  tail -40 "$out/build.log"
  echo "build FAILED (log: $out/build.log)"
  exit 1
fi
echo "build OK ($((SECONDS - start)) s)"

status=0
for stage in ${stages//,/ }; do
  case "$stage" in
    build) ;;
    tests)
      workers=()
      if python3 -c 'import xdist' 2>/dev/null; then
        workers=(-n "${JOBS:-16}")
      fi
      # one intra-op thread per worker: 16 workers of 16 threads each on 16
      # cores ran a quarter of the suite in 230 s (H200, 2026-11-27)
      # tests_by_test.tsv: each test's outcome and seconds as it ends (a
      # failure's report after it), so a suite the timeout stops still says
      # what failed (tests/conftest.py, JITAMP_TEST_LOG)
      rm -f "$out/tests_by_test.tsv"
      JITAMP_TEST_LOG="$out/tests_by_test.tsv" OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} \
        timeout "${TESTS_TIMEOUT:-300}" python3 -m pytest -q -p no:cacheprovider "${workers[@]}" -rs "$@" 2>&1 |
        tee "$out/tests.log" | tail -60
      [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      ;;
    bench)
      for dtype in float16 bfloat16; do
        timeout "${BENCH_TIMEOUT:-300}" python3 benchmarks/bench_autocast.py --device cuda --dtype "$dtype" \
          --repeats "${BENCH_REPEATS:-11}" --json "$out/bench_cuda_$dtype.json" "$@" 2>&1 |
          grep -v '^USDT' | tee -a "$out/bench_cuda.log"
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      done
      ;;
    fuzz)
      # programs whose inputs and parameters live on the GPU; the outcome of
      # each goes to fuzz_cuda.json (regenerate one here, no GPU needed:
      # python tools/jitamp_fuzz --device cuda --seed S --index N --print)
      python3 tools/jitamp_fuzz --device cuda --count 1000000 --seed "${FUZZ_SEED:-1}" --jobs "${JOBS:-16}" \
        --budget "${FUZZ_SECONDS:-120}" --max-shrink 0 --json "$out/fuzz_cuda.json" 2>&1 |
        grep -v '^\[' | tee "$out/fuzz_cuda.log"
      [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      ;;
  esac
done
exit $status
