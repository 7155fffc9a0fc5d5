#!/usr/bin/env bash
# Checks every kernel of the held-out set, bench/perfmodel/heldout.toml, on the PTX simulator:
# check_corpus_sim.sh run on that manifest (same table, same exit status).
#
# Usage: bench/perfmodel/check_heldout_sim.sh [BUILD_DIR]
#   BUILD_DIR  holds the warpbook binary (default: build); set WARPBOOK to use another binary.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/check_corpus_sim.sh" "${1:-build}" bench/perfmodel/heldout.toml
