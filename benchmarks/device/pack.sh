#!/bin/bash
# Build machine side: builds the jars and packs .device/ for the GPU machine (a Java 25 runtime, the CLI's and
# the samples' runtime jars, the modules' test jars, the JUnit console launcher and the JVM flags file
# bin/jvm-flags as .device/jvm-flags), using ../shared/gpu/prepare.sh.
#   benchmarks/device/pack.sh                 # jars only (GPU test suite, benchmarks on generated data)
#   benchmarks/device/pack.sh --fmnist DIR    # plus the Fashion-MNIST IDX files of DIR, xz-compressed into
#                                               .device/data/fashion-mnist/ (unpack there with fmnist-unpack.sh)
#   benchmarks/device/pack.sh --baseline [REF] # plus the CLI's runtime jars of git ref REF (default 1de11af) for
#                                               before-after.sh: built in a temporary `git worktree` with
#                                               `./mvnw -o -q -DskipTests package` (never install), cached under
#                                               target/baseline/<commit>/; only the jars that differ from .device/lib
#                                               (our module jars, and dependency jars the new lib lacks) go to
#                                               .device/baseline/, and .device/baseline/classpath lists REF's exact
#                                               class path (each jar from baseline/ or lib/)
#   benchmarks/device/pack.sh --fmnist-train DIR  # the training images only (fmnist-routing.sh; 3.7 MiB less)
#   (together, for issue10.sh: benchmarks/device/pack.sh --fmnist-train DIR --baseline)
# Then run on the GPU machine with .device carried, e.g. `bash benchmarks/device/gpu-tests.sh`.
#
# A call carries 64 MiB at most. Two things keep Fashion-MNIST and the jars under it:
# - the JRE is jlinked without jlink's own zip compression and then xz -9e compressed (about 16 MiB instead of
#   prepare.sh's 25 MiB: xz compresses the raw modules image far better than it compresses zip streams); it is
#   written under the stamp prepare.sh computes, so prepare.sh keeps it;
# - the IDX files go as xz (26 MiB instead of gzip's 30 MiB).
# prepare.sh slims the bytedeco CUDA natives to cudart/cufile/nvrtc; the samples also need cuBLAS's JNI library,
# which is put back from the Maven repository's jar, and doctor needs NVML's (libjninvml.so, for NVLink; 1 MiB),
# put back likewise; zstd-jni keeps only its linux/amd64 library.
set -euo pipefail
cd "$(dirname "$0")/../.."
fmnist=""
fmnist_only=""
baseline=""
while [ $# -gt 0 ]; do
  case "$1" in
    --fmnist) fmnist="${2:?--fmnist needs a directory}"; shift 2;;
    --fmnist-train) fmnist="${2:?--fmnist-train needs a directory}"; fmnist_only=train-images; shift 2;;
    --baseline) if [ -n "${2:-}" ] && [ "${2#--}" = "$2" ]; then baseline="$2"; shift 2; else baseline=1de11af; shift; fi;;
    *) echo "pack.sh: unknown argument $1 (use --fmnist DIR, --fmnist-train DIR, --baseline [REF])" >&2; exit 2;;
  esac
done
if [ -n "$baseline" ]; then # fail before the long build when the ref is unknown
  baseline_commit="$(git rev-parse --verify --quiet "$baseline^{commit}")" || { echo "pack.sh: --baseline $baseline: not a commit" >&2; exit 2; }
fi

# temporary folders (prepare.sh's copy, the baseline's worktree) go on every exit
pdir=""
wt=""
cleanup() {
  if [ -n "$wt" ]; then git worktree remove --force "$wt" 2>/dev/null; git worktree prune; rm -rf "$(dirname "$wt")"; wt=""; fi
  [ -n "$pdir" ] && rm -rf "$pdir"
  return 0
}
trap cleanup EXIT

./mvnw -q -DskipTests package
jdk="${JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}"
mods="java.base,java.logging,java.management,jdk.management,jdk.unsupported,java.naming,java.sql,java.xml,jdk.crypto.ec,java.net.http,jdk.httpserver,jdk.jfr"
stamp="$(echo "$mods $("$jdk/bin/java" -version 2>&1 | head -1)" | sha1sum | cut -c1-12)"
mkdir -p .device
if [ ! -f .device/jre.tar.xz ] || [ "$(cat .device/jre.stamp 2>/dev/null)" != "$stamp" ] || [ ! -f .device/jre.xz9 ]; then
  tmp="$(mktemp -d)"
  "$jdk/bin/jlink" --add-modules "$mods" --strip-debug --no-man-pages --no-header-files --output "$tmp/jre" >/dev/null
  tar -C "$tmp" -cf - jre | xz -9e -T0 > .device/jre.tar.xz
  echo "$stamp" > .device/jre.stamp
  touch .device/jre.xz9
  rm -rf "$tmp"
fi

rm -rf .device/baseline # prepare.sh's size check counts all of .device
tests=(cli/target/device-tests $(ls */target/*-tests.jar))
prepare=../shared/gpu/prepare.sh
if [ ! -d .git ]; then
  # a `git worktree` checkout: .git is a file, and prepare.sh's line that appends /.device/ to .git/info/exclude
  # would fail; .gitignore ignores .device/ already, so a copy without that line runs instead
  pdir="$(mktemp -d)"
  cp ../shared/gpu/prepare.sh ../shared/gpu/env.sh "$pdir/"
  sed -i 's|^grep -qx .*/info/exclude.*$|: # .device/ is in .gitignore|' "$pdir/prepare.sh"
  prepare="$pdir/prepare.sh"
fi
# leaves behind (in DIR) what the GPU machine never uses, and slims zstd-jni
slim_lib() {
  local d="$1" z drop
  # the GPU machine's runtime has no AWT, so plots are drawn here (gdsloader plot): xchart's PDF, SVG and GIF
  # export libraries stay behind
  rm -f "$d"/pdfbox-*.jar "$d"/fontbox-*.jar "$d"/graphics2d-*.jar "$d"/VectorGraphics2D-*.jar "$d"/animated-gif-lib-*.jar
  # JMH and what only it needs: the JMH benchmarks run on the build machine, never on the GPU machine
  rm -f "$d"/jmh-core-*.jar "$d"/jopt-simple-*.jar "$d"/commons-math3-*.jar
  # gRPC's TLS natives (netty-tcnative) for other platforms: the GPU machine is linux/x86_64
  rm -f "$d"/netty-tcnative-boringssl-static-*-osx-*.jar "$d"/netty-tcnative-boringssl-static-*-windows-*.jar \
        "$d"/netty-tcnative-boringssl-static-*-linux-aarch_64.jar
  # zstd-jni (Arrow's ZSTD codec) ships natives for 18 platforms (7 MiB): keep linux/amd64's
  for z in "$d"/zstd-jni-*.jar; do
    [ -e "$z" ] || continue
    drop=$(unzip -Z1 "$z" | grep -E '\.(so|dll|dylib)$' | grep -v '^linux/amd64/' || true)
    [ -n "$drop" ] && zip -q -d "$z" $drop
  done
  return 0
}
# the CLI's runtime jars, slimmed before prepare.sh counts them against the 64 MiB a call carries
libdir="$(mktemp -d)/lib"
cp -r cli/target/lib "$libdir"
slim_lib "$libdir"
"$prepare" "$libdir" cli/target/gds-loader-cli-*[0-9T].jar samples/target/gds-loader-samples-*[0-9T].jar "${tests[@]}"
# the JVM flags every gds-loader JVM runs with (one source: bin/jvm-flags); the device scripts read this copy
cp bin/jvm-flags .device/jvm-flags

natives="$(ls .device/lib/cuda-*-linux-x86_64.jar)"
full="$HOME/.m2/repository/org/bytedeco/cuda/$(basename "$natives" | sed -E 's/^cuda-(.*)-linux-x86_64.jar$/\1/')/$(basename "$natives")"
tmp="$(mktemp -d)"
(cd "$tmp" && "$jdk/bin/jar" xf "$full" org/bytedeco/cuda/linux-x86_64/libjnicublas.so org/bytedeco/cuda/linux-x86_64/libjninvml.so)
"$jdk/bin/jar" uf "$natives" -C "$tmp" org/bytedeco/cuda/linux-x86_64/libjnicublas.so -C "$tmp" org/bytedeco/cuda/linux-x86_64/libjninvml.so
rm -rf "$tmp"


if [ -n "$fmnist" ]; then
  cache=target/fmnist-xz
  mkdir -p "$cache" .device/data/fashion-mnist
  for f in "$fmnist"/${fmnist_only}*-ubyte.gz; do
    x="$cache/$(basename "$f" .gz).xz"
    [ -f "$x" ] || gzip -dc "$f" | xz -9e -T0 > "$x"
    cp "$x" .device/data/fashion-mnist/
  done
fi
if [ -n "$baseline" ]; then
  cache="target/baseline/$baseline_commit"
  if [ ! -f "$cache/done" ]; then
    rm -rf "$cache"
    wt="$(mktemp -d)/baseline"
    git worktree add -q --detach "$wt" "$baseline_commit"
    echo "building $baseline ($baseline_commit) in $wt: ./mvnw -o -q -DskipTests package"
    (cd "$wt" && ./mvnw -o -q -B -DskipTests package)
    mkdir -p "$cache/lib"
    cp "$wt"/cli/target/lib/*.jar "$wt"/cli/target/gds-loader-cli-*[0-9T].jar "$cache/lib/"
    cleanup
    touch "$cache/done"
  fi
  stage="$(mktemp -d)"
  cp "$cache"/lib/*.jar "$stage/"
  slim_lib "$stage"
  mkdir -p .device/baseline
  : > .device/baseline/classpath
  for j in "$stage"/*.jar; do
    n="$(basename "$j")"
    # a dependency jar's name carries its version; our modules' SNAPSHOT jars differ in content under one name
    if [ -f ".device/lib/$n" ] && { case "$n" in gds-loader-*) cmp -s "$j" ".device/lib/$n";; *) true;; esac; }; then
      echo ".device/lib/$n" >> .device/baseline/classpath
    else
      cp "$j" .device/baseline/
      echo ".device/baseline/$n" >> .device/baseline/classpath
    fi
  done
  rm -rf "$stage"
  echo "$baseline $baseline_commit" > .device/baseline/ref
  echo "baseline $baseline ($baseline_commit): $(ls .device/baseline/*.jar | wc -l) jars in .device/baseline/ \
($(du -sb .device/baseline | cut -f1 | awk '{printf "%.1f", $1 / 1048576}') MiB): $(cd .device/baseline && ls *.jar | tr '\n' ' ')"
fi
bytes=$(du -sb .device | cut -f1)
tree=$(git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1)
echo "packed .device/: $(awk "BEGIN {printf \"%.1f\", $bytes / 1048576}") MiB; with the working tree's tracked files \
($(awk "BEGIN {printf \"%.1f\", $tree / 1048576}") MiB): $(awk "BEGIN {printf \"%.1f\", ($bytes + $tree) / 1048576}") MiB of the 64 MiB a call carries"
if [ $((bytes + tree)) -gt $((63 << 20)) ]; then
  echo "pack.sh: over 63 MiB: the call may be refused (drop --fmnist's t10k files, or data)" >&2
fi
