package image

import (
	"context"
	"strings"

	"github.com/rdmabench/rdmabench/internal/vm/initramfs"
	"github.com/rdmabench/rdmabench/internal/vm/ldd"
)

// addLibs adds the host libraries that the ELF files among files need,
// found by ldd with libPath (may be empty) as LD_LIBRARY_PATH, except
// those under root (the unpacked packages, already in a; "" for none),
// those a already has and those whose guest paths have is true for (the
// versions already in the guest win).
func addLibs(ctx context.Context, a *initramfs.Archive, files []string, libPath, root string, have map[string]bool) error {
	r, err := ldd.Run(ctx, libPath, files)
	if err != nil {
		return err
	}
	for _, lib := range r.Libs {
		gp := ldd.GuestPath(lib)
		if root != "" && strings.HasPrefix(lib.Path, root+"/") || a.Has(gp) || have[initramfs.GuestPath(gp)] {
			continue
		}
		if err := a.HostFile(gp, lib.Path); err != nil {
			return err
		}
	}
	return nil
}
