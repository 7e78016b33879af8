package image

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rdmabench/rdmabench/internal/vm/initramfs"
)

// A kernel change of known cost, for A/B runs of the work metrics
// (rxevm -rxe-extra-cost N): rdma_rxe rebuilt from Debian's source with N
// turns of an empty loop at the start of rxe_rcv, which every packet rxe
// receives goes through (the UDP tunnel's receive and the loopback path
// alike). gcc-12 makes a turn two instructions (sub, jne; the compiler
// barrier keeps the loop), and a write round trip, four packets (two
// writes, two ACKs), costs about 8N kernel instructions more, all inside
// rxe_rcv (measured at N=1000: rxe_rcv rose to 8.6k insns/op). The module
// replaces the stock one at its guest path in a small cpio appended after
// the base.

// MaxRxeExtraCost bounds -rxe-extra-cost: at 10^6 turns a packet takes
// milliseconds under TCG.
const MaxRxeExtraCost = 1000000

// rxeCostFunc is the function that gets the extra cost.
const rxeCostFunc = "rxe_rcv"

// rxeCostSource is rdma_rxe with n turns at the start of rxe_rcv.
func rxeCostSource(n int) moduleSource {
	return moduleSource{
		Dir: "drivers/infiniband/sw/rxe", Config: "CONFIG_RDMA_RXE", Module: "rdma_rxe",
		Patch: fmt.Sprintf("%s+%d", rxeCostFunc, n),
		Apply: func(dir string) error { return addLoop(filepath.Join(dir, "rxe_recv.c"), rxeCostFunc, n) },
	}
}

// addLoop inserts n turns of an empty loop as the first statement of the
// function fn defined in the C file.
func addLoop(file, fn string, n int) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	s := string(b)
	// The definition: "fn(" at a line's start after its return type's
	// line, or after "void ", then the body's first "{" on its own line.
	def := -1
	for _, pre := range []string{"\nvoid " + fn + "(", "\n" + fn + "("} {
		if i := strings.Index(s, pre); i >= 0 {
			def = i
			break
		}
	}
	if def < 0 {
		return fmt.Errorf("no definition of %s in %s", fn, filepath.Base(file))
	}
	brace := strings.Index(s[def:], "\n{\n")
	if brace < 0 {
		return errors.New("no opening brace of " + fn)
	}
	at := def + brace + len("\n{\n")
	loop := fmt.Sprintf("\t{ /* rxevm -rxe-extra-cost */\n\t\tunsigned long rxevm_i;\n\n\t\tfor (rxevm_i = 0; rxevm_i < %dUL; rxevm_i++)\n\t\t\tbarrier();\n\t}\n", n)
	return os.WriteFile(file, []byte(s[:at]+loop+s[at:]), 0o644)
}

// LoadRxeCost returns a cpio that replaces the base's rdma_rxe.ko with
// one that costs n more loop turns per received packet, building it when
// needed. The caller holds the base cache lock.
func LoadRxeCost(ctx context.Context, cacheDir string, base *Base, n int, logf func(string, ...any)) (string, error) {
	if n < 1 || n > MaxRxeExtraCost {
		return "", fmt.Errorf("-rxe-extra-cost %d: want 1 to %d loop turns", n, MaxRxeExtraCost)
	}
	_, kpkg, err := kernelDebOf(cacheDir, base)
	if err != nil {
		return "", fmt.Errorf("-rxe-extra-cost: %w", err)
	}
	var guestPath string
	for p := range base.Files {
		if strings.HasSuffix(p, "/rdma_rxe.ko") {
			guestPath = p
		}
	}
	if guestPath == "" {
		return "", fmt.Errorf("-rxe-extra-cost: the guest in %s has no rdma_rxe.ko", base.Dir)
	}
	ko, err := buildModule(ctx, cacheDir, kpkg, rxeCostSource(n), logf)
	if err != nil {
		return "", fmt.Errorf("-rxe-extra-cost: %w", err)
	}
	cpio := filepath.Join(filepath.Dir(ko), "rxe.cpio")
	if _, err := os.Stat(cpio); err == nil {
		return cpio, nil
	}
	a := initramfs.New()
	if err := a.HostFile("/"+guestPath, ko); err != nil {
		return "", err
	}
	return cpio, a.WriteFile(cpio)
}
