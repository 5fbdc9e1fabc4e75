#!/bin/bash
# Build machine side: builds the jars and packs .device/ for the GPU machine (a Java 25 runtime, the CLI's and
# the samples' runtime jars, the modules' test jars, the JUnit console launcher and the JVM flags file
# bin/jvm-flags as .device/jvm-flags), using ../shared/gpu/prepare.sh.
#   benchmarks/device/pack.sh                 # jars only (GPU test suite, benchmarks on generated data)
#   benchmarks/device/pack.sh --fmnist DIR    # plus the Fashion-MNIST IDX files of DIR, xz-compressed into
#                                               .device/data/fashion-mnist/ (unpack there with fmnist-unpack.sh)
# Then run on the GPU machine with .device carried, e.g. `bash benchmarks/device/gpu-tests.sh`.
#
# A call carries 64 MiB at most. Two things keep Fashion-MNIST and the jars under it:
# - the JRE is jlinked without jlink's own zip compression and then xz -9e compressed (about 16 MiB instead of
#   prepare.sh's 25 MiB: xz compresses the raw modules image far better than it compresses zip streams); it is
#   written under the stamp prepare.sh computes, so prepare.sh keeps it;
# - the IDX files go as xz (26 MiB instead of gzip's 30 MiB).
# prepare.sh slims the bytedeco CUDA natives to cudart/cufile/nvrtc; the samples also need cuBLAS's JNI library,
# which is put back from the Maven repository's jar; zstd-jni keeps only its linux/amd64 library.
set -euo pipefail
cd "$(dirname "$0")/../.."
fmnist=""
[ "${1:-}" = "--fmnist" ] && fmnist="$2"

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

tests=(cli/target/device-tests $(ls */target/*-tests.jar))
../shared/gpu/prepare.sh cli/target/lib cli/target/gds-loader-cli-*[0-9T].jar samples/target/gds-loader-samples-*[0-9T].jar "${tests[@]}"
# the JVM flags every gds-loader JVM runs with (one source: bin/jvm-flags); the device scripts read this copy
cp bin/jvm-flags .device/jvm-flags

natives="$(ls .device/lib/cuda-*-linux-x86_64.jar)"
full="$HOME/.m2/repository/org/bytedeco/cuda/$(basename "$natives" | sed -E 's/^cuda-(.*)-linux-x86_64.jar$/\1/')/$(basename "$natives")"
tmp="$(mktemp -d)"
(cd "$tmp" && "$jdk/bin/jar" xf "$full" org/bytedeco/cuda/linux-x86_64/libjnicublas.so)
"$jdk/bin/jar" uf "$natives" -C "$tmp" org/bytedeco/cuda/linux-x86_64/libjnicublas.so
rm -rf "$tmp"

# the GPU machine's runtime has no AWT, so plots are drawn here (gdsloader plot): xchart's PDF, SVG and GIF
# export libraries stay behind
rm -f .device/lib/pdfbox-*.jar .device/lib/fontbox-*.jar .device/lib/graphics2d-*.jar \
      .device/lib/VectorGraphics2D-*.jar .device/lib/animated-gif-lib-*.jar
# JMH and what only it needs: the JMH benchmarks run on the build machine, never on the GPU machine
rm -f .device/lib/jmh-core-*.jar .device/lib/jopt-simple-*.jar .device/lib/commons-math3-*.jar
# zstd-jni (Arrow's ZSTD codec) ships natives for 18 platforms (7 MiB): keep linux/amd64's
for z in .device/lib/zstd-jni-*.jar; do
  [ -e "$z" ] || continue
  drop=$(unzip -Z1 "$z" | grep -E '\.(so|dll|dylib)$' | grep -v '^linux/amd64/' || true)
  [ -n "$drop" ] && zip -q -d "$z" $drop
done

if [ -n "$fmnist" ]; then
  cache=target/fmnist-xz
  mkdir -p "$cache" .device/data/fashion-mnist
  for f in "$fmnist"/*-ubyte.gz; do
    x="$cache/$(basename "$f" .gz).xz"
    [ -f "$x" ] || gzip -dc "$f" | xz -9e -T0 > "$x"
    cp "$x" .device/data/fashion-mnist/
  done
fi
bytes=$(du -sb .device | cut -f1)
echo "packed .device/: $((bytes >> 20)) MiB of the 64 MiB a call carries (with the working tree)"
