#!/bin/bash
# Packs what `make compare` needs to run under KVM on a machine that has
# /dev/kvm but no QEMU, no network and no rdmabench build (the session's
# lent device machine): this host's QEMU with its libraries (not glibc's,
# the target's are newer) and firmware, rxevm's cached guest (no .debs),
# busybox, and the binaries in bin/. Writes out-kvm/bundle.tar.xz (under
# 64 MiB, the device tool's carry limit). Run from the module root after
# `make compare` (and docs/compare/2026-12-03-cloop/build.sh) built bin/.
set -euo pipefail
S=$(mktemp -d)
trap 'rm -rf "$S"' EXIT
Q=$S/qemu
mkdir -p $Q/usr/bin $Q/usr/share/qemu $Q/usr/share/seabios $Q/lib $Q/mod $S/shim $S/bb $S/cache $S/bin
cp /usr/bin/qemu-system-x86_64 $Q/usr/bin/
cp /usr/share/qemu/{kvmvapic,linuxboot,linuxboot_dma,multiboot,multiboot_dma,pvh}.bin $Q/usr/share/qemu/
cp -L /usr/share/seabios/{bios-256k,bios}.bin $Q/usr/share/seabios/
cp /usr/lib/x86_64-linux-gnu/qemu/accel-tcg-x86_64.so $Q/mod/
for l in $(ldd /usr/bin/qemu-system-x86_64 /usr/lib/x86_64-linux-gnu/qemu/accel-tcg-x86_64.so | awk '$3 ~ /^\// {print $3}' | sort -u); do
	case $(basename $l) in libc.so.*|libm.so.*|libgcc_s.so.*|ld-linux*) continue ;; esac
	cp -L $l $Q/lib/
done
cat > $Q/qemu <<'W'
#!/bin/sh
D=$(dirname "$(readlink -f "$0")")
export LD_LIBRARY_PATH=$D/lib QEMU_MODULE_DIR=$D/mod
exec "$D/usr/bin/qemu-system-x86_64" "$@"
W
chmod +x $Q/qemu
# rxevm resolves the guest's package versions with apt; failing, it boots
# the last cached guest, which is what must happen offline.
printf '#!/bin/sh\nexit 1\n' > $S/shim/apt-get; cp $S/shim/apt-get $S/shim/apt-cache; chmod +x $S/shim/*
cp /usr/bin/busybox $S/bb/
C=${RDMABENCH_VM_CACHE:-$HOME/.cache/rdmabench/rxevm}
cp -a $C/.rxevm-cache $C/current $C/resolved $S/cache/
cp -a $C/$(cat $C/current) $S/cache/
cp bin/rxevm bin/rdmabench.test bin/rdmacompare bin/rdmapeer $S/bin/
[ -f bin/cloop ] && cp bin/cloop $S/bin/
mkdir -p out-kvm
tar -C $S -cf - . | xz -T2 -6 > out-kvm/bundle.tar.xz
ls -la out-kvm/bundle.tar.xz
