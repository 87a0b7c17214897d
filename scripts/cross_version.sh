#!/usr/bin/env bash
# Saves models rewritten by jitamp with one torch and runs them with another,
# both ways, against the running torch's eager autocast
# (scripts/cross_version.py):
#
#   scripts/cross_version.sh 2.4.1 2.13.0
#
# Venvs as scripts/torch_matrix.sh makes them ($JITAMP_MATRIX_VENVS, default
# ~/.cache/jitamp-matrix/torch-VERSION; run that script first for a missing
# one). jitamp is built from the committed tree (git archive HEAD) once per
# version. Prints one line per direction; exits non-zero if any differs.
set -uo pipefail

if [ $# -ne 2 ]; then
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
venvs=${JITAMP_MATRIX_VENVS:-$HOME/.cache/jitamp-matrix}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for version in "$1" "$2"; do
  python=$venvs/torch-$version/bin/python
  if [ ! -x "$python" ]; then
    echo "no venv for torch $version at $venvs/torch-$version (scripts/torch_matrix.sh $version makes it)"
    exit 2
  fi
  mkdir -p "$work/$version"
  git -C "$repo" archive HEAD | tar -x -C "$work/$version"
  if ! (cd "$work/$version" && "$python" setup.py -q build_ext --inplace) >"$work/$version.log" 2>&1; then
    echo "torch $version: build FAILED"; tail -20 "$work/$version.log"; exit 1
  fi
done
status=0
run() { # run VERSION save|check DIR
  PYTHONPATH="$work/$1/python" "$venvs/torch-$1/bin/python" "$repo/scripts/cross_version.py" "$2" "$3"
}
for pair in "$1 $2" "$2 $1"; do
  set -- $pair
  models=$work/saved-by-$1
  run "$1" save "$models" >/dev/null || { echo "torch $1: save FAILED"; status=1; continue; }
  run "$2" check "$models" || status=1
done
exit $status
