#!/usr/bin/env bash
# Builds jitamp and runs its test suite on each torch version given, one
# virtual environment per version, and prints one line per version.
#
#   scripts/torch_matrix.sh 2.9.1 2.13.0 2.14.1 2.15.0
#
# Venvs live in $JITAMP_MATRIX_VENVS (default ~/.cache/jitamp-matrix), as
# torch-VERSION; a missing one is made and `pip install torch==VERSION` run
# in it (versions above the local pip cap need PIP_CONFIG_FILE=/dev/null,
# which this script sets for them). Each version builds a copy of the
# committed tree (git archive HEAD), so the checkout's own build is not
# touched. Logs: $JITAMP_MATRIX_LOGS (default /tmp/jitamp-matrix)/VERSION.log.
set -uo pipefail

if [ $# -eq 0 ]; then
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
venvs=${JITAMP_MATRIX_VENVS:-$HOME/.cache/jitamp-matrix}
logs=${JITAMP_MATRIX_LOGS:-/tmp/jitamp-matrix}
mkdir -p "$venvs" "$logs"
status=0
summary=()
for version in "$@"; do
  venv=$venvs/torch-$version
  log=$logs/$version.log
  : >"$log"
  if [ ! -x "$venv/bin/python" ]; then
    pip_env=()
    # The local pip configuration caps torch at 2.14.1.
    if [ "$(printf '%s\n' "$version" 2.14.1 | sort -V | tail -1)" != 2.14.1 ]; then
      pip_env=(PIP_CONFIG_FILE=/dev/null)
    fi
    python3 -m venv "$venv" >>"$log" 2>&1 &&
      env "${pip_env[@]}" "$venv/bin/pip" install -q "torch==$version" ninja setuptools wheel \
        pytest pytest-xdist expecttest filecheck==1.0.6 numpy >>"$log" 2>&1
    if [ $? -ne 0 ]; then
      summary+=("torch $version: install FAILED (see $log)")
      status=1
      continue
    fi
  fi
  src=$(mktemp -d)
  git -C "$repo" archive HEAD | tar -x -C "$src"
  torch_version=$("$venv/bin/python" -c 'import torch; print(torch.__version__)' 2>>"$log")
  start=$SECONDS
  if ! (cd "$src" && "$venv/bin/python" setup.py -q build_ext --inplace) >>"$log" 2>&1; then
    summary+=("torch $torch_version: build FAILED after $((SECONDS - start)) s (see $log)")
    status=1
    rm -rf "$src"
    continue
  fi
  built=$((SECONDS - start))
  start=$SECONDS
  (cd "$src" && PYTHONPATH="$src/python" "$venv/bin/python" -m pytest -q -p no:cacheprovider -n auto) >>"$log" 2>&1
  result=$?
  tests=$(grep -E '^(=+ )?[0-9]+ (passed|failed)' "$log" | tail -1 | sed 's/=//g; s/^ *//; s/ *$//')
  if [ $result -ne 0 ]; then
    status=1
    summary+=("torch $torch_version: build OK (${built} s), tests FAILED: ${tests:-no summary} ($((SECONDS - start)) s, see $log)")
  else
    summary+=("torch $torch_version: build OK (${built} s), tests: $tests ($((SECONDS - start)) s)")
  fi
  rm -rf "$src"
done
printf '%s\n' "${summary[@]}"
exit $status
