#!/bin/bash
# rxe-delay.sh: a known kernel-side change for the kernel comparison. Builds
# Debian bookworm's rdma_rxe module twice from its own source, once as it is
# and once with ndelay(1000) before every request packet rxe transmits (a
# write ping-pong sends two per round trip: about +2 us), and lays out two
# module trees that rxevm's -modules takes, beside the stock bzImage:
#
#   bash docs/validate-ab/rxe-delay.sh /tmp/kb
#   bin/rdmaab -old-vmflags "-kernel /tmp/kb/vmlinuz -modules /tmp/kb/plain/lib/modules/6.1.0-57-amd64" \
#              -new-vmflags "-kernel /tmp/kb/vmlinuz -modules /tmp/kb/delay/lib/modules/6.1.0-57-amd64" ...
#
# Needs apt-get (Debian's mirror), gcc-12, make; about 10 minutes on 2 CPUs.
set -euo pipefail
W=${1:?usage: rxe-delay.sh WORKDIR}
REL=${REL:-6.1.0-57-amd64}
VER=${VER:-6.1.192-3}
mkdir -p "$W" && cd "$W"
apt-get download "linux-image-$REL=$VER" "linux-headers-$REL=$VER" "linux-headers-${REL%-amd64}-common=$VER" \
	"linux-kbuild-6.1=$VER" "linux-source-6.1=$VER"
for d in *.deb; do dpkg -x "$d" root; done
cp "root/boot/vmlinuz-$REL" vmlinuz
# The headers' Makefile includes the common tree by its installed path.
sed -i "s#^include /usr/src/#include $PWD/root/usr/src/#" "root/usr/src/linux-headers-$REL/Makefile"
tar xJf root/usr/src/linux-source-6.1.tar.xz --wildcards 'linux-source-6.1/drivers/infiniband/sw/rxe/*'
for v in plain delay; do
	rm -rf "rxe-$v" && cp -r linux-source-6.1/drivers/infiniband/sw/rxe "rxe-$v"
	if [ $v = delay ]; then
		sed -i 's#^\#include <crypto/hash.h>#&\n\#include <linux/delay.h>#' rxe-delay/rxe_req.c
		sed -i 's#^\terr = rxe_xmit_packet(qp, &pkt, skb);#\tndelay(1000); /* rdmabench: a known change */\n&#' rxe-delay/rxe_req.c
		grep -q 'ndelay(1000)' rxe-delay/rxe_req.c || { echo "rxe-delay.sh: the patch did not apply" >&2; exit 1; }
	fi
	make -C "root/usr/src/linux-headers-$REL" M="$PWD/rxe-$v" CONFIG_RDMA_RXE=m modules
	rm -rf "$v" && mkdir -p "$v/lib/modules" && cp -al "root/lib/modules/$REL" "$v/lib/modules/"
	ko="$v/lib/modules/$REL/kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko"
	rm "$ko" && strip --strip-debug -o "$ko" "rxe-$v/rdma_rxe.ko"
done
echo "rxe-delay.sh: $PWD/vmlinuz, modules in $PWD/plain and $PWD/delay"
