#!/bin/bash
# tests/gpu/bundle.sh: makes build/gpu-bundle, what tests/gpu/run.sh uses on a GPU host
# that cannot build ccdiag itself (no Open MPI, jansson or libinih there, and no package
# registry to install them from: a lent GPU machine). Run it here, on the Debian 12
# build machine, with CUDA under CUDA_HOME; carry build/gpu-bundle to the GPU host
# (about 25 MB) and run tests/gpu/run.sh there, which picks it up when its own build
# cannot run.
#
# What it holds: bin/ccprobe (CUDA, NCCL, cuBLASLt), bin/ccprobe-nonccl (the same
# without NCCL, for a host whose libnccl.so.2 is nowhere to be found: ccprobe links it),
# bin/ccreport, bin/jq (run.sh prints its figures with it); lib/ the shared libraries they and Open MPI's components need beyond
# glibc, libstdc++, the CUDA driver and NCCL (which the GPU host has: NCCL is ~200 MB);
# ompi/ Open MPI's components, found through OMPI_MCA_mca_base_component_path. Without
# mpirun on the host, ccprobe runs as an MPI singleton (one rank: the first GPU);
# tests/gpu/run.sh sets what that needs (bundle.env).
set -euo pipefail
cd "$(dirname "$0")/../.."
D=build/gpu-bundle
OMPI_COMP=$(ompi_info --path pkglibdir 2>/dev/null | sed -n 's/.*Pkglibdir: *//p')
[ -d "$OMPI_COMP" ] || { echo "bundle: Open MPI's component folder not found (ompi_info)" >&2; exit 1; }

make -j2 USE_CUDA=yes build/ccprobe build/ccreport
make -j2 B=build/nonccl USE_CUDA=yes USE_NCCL=no build/nonccl/ccprobe
rm -rf "$D"
mkdir -p "$D/bin" "$D/lib" "$D/ompi"
cp build/ccprobe build/ccreport "$D/bin/"
cp build/nonccl/ccprobe "$D/bin/ccprobe-nonccl"
cp "$OMPI_COMP"/*.so "$D/ompi/"
# jq prints run.sh's figures; a GPU image may lack it
cp "$(command -v jq)" "$D/bin/jq"

# the libraries of the binaries and the components, but the base system's, the CUDA
# driver's and NCCL's; symlinks resolved (the soname is the file name)
base='^(libc|libm|libdl|libpthread|librt|libresolv|libutil|libstdc\+\+|libgcc_s|ld-linux-x86-64|libcuda|libnvidia-ml|libnccl)\.so'
for f in "$D"/bin/* "$D"/ompi/*.so; do
	ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
	[[ "$name" =~ $base ]] && continue
	cp -L "$path" "$D/lib/$name"
done
# the components' own libraries may need more (libfabric's providers, pmix's)
for f in "$D"/lib/*; do
	ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
	[[ "$name" =~ $base ]] || [ -e "$D/lib/$name" ] || cp -L "$path" "$D/lib/$name"
done
cat >"$D/bundle.env" <<'EOF'
# sourced by tests/gpu/run.sh with B set to this folder
export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMPI_MCA_mca_base_component_path="$B/ompi"
export OMPI_MCA_mca_base_component_show_load_errors=0
# no mpirun: one rank, an MPI singleton that starts no daemon
export OMPI_MCA_ess_singleton_isolated=1
EOF
{
	echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), glibc $(ldd --version | sed -n '1s/.* //p')"
	echo "CUDA $("${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" --version 2>/dev/null | sed -n 's/^Cuda compilation tools, //p')"
	echo "$(ompi_info --version 2>/dev/null | head -1)"
	git log -1 --format='ccdiag %h %s' 2>/dev/null | cut -c1-100
} >"$D/BUILT"
echo "bundle: $D, $(du -sh "$D" | cut -f1): $(ls "$D/bin" | tr '\n' ' ')+ $(ls "$D/lib" | wc -l) libraries, $(ls "$D/ompi" | wc -l) Open MPI components"
