package vm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/rdmabench/rdmabench/internal/vm/debcache"
	"github.com/rdmabench/rdmabench/internal/vm/image"
	"github.com/rdmabench/rdmabench/internal/vm/initramfs"
	"github.com/rdmabench/rdmabench/internal/vm/insns"
	"github.com/rdmabench/rdmabench/internal/vm/qmp"
)

// A prepared run: what every VM of it boots.
type prepared struct {
	qemu     string       // the QEMU binary
	kernel   string       // the kernel, in the run's temporary directory
	initrd   string       // the base (and fleet layer) and the run's archive, ditto
	cacheDir string       // the Debian package cache
	nonce    string       // the end-of-run marker's nonce
	plugin   []string     // -insns: QEMU's arguments loading the counter
	insnsDir string       // -insns: the directory its counts are shared from
	layer    *image.Layer // the fleet layer (multi-node mode only)
}

// prepare checks the tools and the -kernel/-modules options, brings the
// cached guest (and, with several nodes, the fleet layer) up to date and
// writes the kernel and the run's initramfs into tmp. In single-VM mode it
// first probes the host CPUs (-probe).
func prepare(ctx context.Context, c *Config, tmp string, stderr io.Writer, logf func(string, ...any)) (*prepared, error) {
	fleet := c.Nodes > 1
	p := &prepared{kernel: filepath.Join(tmp, "vmlinuz"), initrd: filepath.Join(tmp, "initrd"), nonce: randomHex(8)}
	if fleet {
		p.initrd = filepath.Join(tmp, "shared.cpio")
	}
	var busybox string
	var err error
	if p.qemu, busybox, p.cacheDir, err = hostSetup(c); err != nil {
		return nil, err
	}
	// The user's kernel is checked before the cache, so that a wrong path
	// fails at once, not after a download.
	uk, err := image.OpenUserKernel(ctx, c.Kernel, c.Modules, tmp)
	if err != nil {
		return nil, err
	}
	var hostEnv []string
	if c.Probe && !fleet {
		pin, _ := qmp.ParsePin(c.Pin)
		hostEnv = probeHost(ctx, c.SMP, pin, logf)
	}

	notice := func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
	lock, err := debcache.Lock(ctx, p.cacheDir, logf, notice)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	base, err := image.LoadBase(ctx, p.cacheDir, busybox, logf)
	if err != nil {
		return nil, err
	}
	if uk != nil {
		if err := uk.CheckWith(base); err != nil {
			return nil, err
		}
	}
	have := maps.Clone(base.Files)
	parts := []string{base.Initrd}
	if fleet {
		if p.layer, err = image.LoadLayer(ctx, p.cacheDir, base, busybox, logf); err != nil {
			return nil, err
		}
		maps.Copy(have, p.layer.Files)
		parts = append(parts, p.layer.CPIO)
	}
	if c.RxeCost > 0 {
		cpio, err := image.LoadRxeCost(ctx, p.cacheDir, base, c.RxeCost, logf)
		if err != nil {
			return nil, err
		}
		parts = append(parts, cpio) // after the base: its rdma_rxe.ko wins
	}
	if c.SIW {
		siw, err := image.LoadSIW(ctx, p.cacheDir, base, busybox, logf)
		if err != nil {
			return nil, err
		}
		maps.Copy(have, siw.Files)
		parts = append(parts, siw.CPIO)
	}
	kernel := base.Kernel
	if uk != nil && uk.Image != "" {
		kernel = uk.Image
	}
	if err := linkOrCopy(kernel, p.kernel); err != nil {
		return nil, err
	}
	if err := initramfs.Concat(p.initrd, parts...); err != nil {
		return nil, err
	}
	if c.Insns {
		so, err := insns.Build(ctx, filepath.Join(p.cacheDir, debcache.PluginDir), logf)
		if err != nil {
			return nil, err
		}
		p.insnsDir = filepath.Join(tmp, "insns")
		if err := os.Mkdir(p.insnsDir, 0o755); err != nil {
			return nil, err
		}
		p.plugin = insns.QemuArgs(so, p.insnsDir)
		pre, err := insns.BuildPreload(ctx, filepath.Join(p.cacheDir, debcache.PluginDir), logf)
		if err != nil {
			return nil, err
		}
		if err := linkOrCopy(pre, filepath.Join(p.insnsDir, insns.PreloadFile)); err != nil {
			return nil, err
		}
	}
	lock.Close()

	ra, err := image.RunArchive(ctx, image.Run{
		Prog: c.Prog, Args: c.Args, Includes: c.Includes,
		Env: append(hostEnv, c.Env...), Share: c.OutDir != "", Nonce: p.nonce, Insns: c.Insns, SIW: c.SIW, NUMA2: c.NUMA2,
	}, have)
	if err != nil {
		return nil, err
	}
	if fleet {
		if err := addFleetFiles(ra, c, p.layer); err != nil {
			return nil, err
		}
	}
	if uk != nil {
		// After the fleet's files: this /init, loading the user's modules, wins.
		if err := uk.AddTo(ra, fleet, c.Slurm); err != nil {
			return nil, err
		}
		logf("booting the user's kernel %s with modules %s from %s", uk.Release, uk.Modules.Release, uk.From)
	}
	return p, ra.AppendTo(p.initrd)
}

// hostSetup finds QEMU, busybox and the Debian tools rxevm needs, makes
// -out absolute (creating it) and returns the cache directory.
func hostSetup(c *Config) (qemu, busybox, cacheDir string, err error) {
	qemu, err = exec.LookPath(c.Qemu)
	if err != nil {
		return "", "", "", fmt.Errorf("%s not found: apt-get install qemu-system-x86", c.Qemu)
	}
	busybox, err = exec.LookPath("busybox")
	if err != nil {
		return "", "", "", errors.New("busybox not found: apt-get install busybox-static")
	}
	for _, tool := range []string{"apt-get", "apt-cache", "dpkg", "ldd"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", "", "", fmt.Errorf("%s not found: rxevm needs a Debian (bookworm) host", tool)
		}
	}
	if c.OutDir != "" {
		if err := os.MkdirAll(c.OutDir, 0o755); err != nil {
			return "", "", "", err
		}
		if c.OutDir, err = filepath.Abs(c.OutDir); err != nil {
			return "", "", "", err
		}
	}
	if cacheDir, err = debcache.DefaultDir(); err != nil {
		return "", "", "", err
	}
	if cacheDir, err = filepath.Abs(cacheDir); err != nil {
		return "", "", "", err
	}
	return qemu, busybox, cacheDir, nil
}

// linkOrCopy hard-links src to dst, or copies it when that fails.
func linkOrCopy(src, dst string) error {
	if os.Link(src, dst) == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
