package main

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"strings"
)

// rdmaModules are the kernel modules /init loads for soft-RoCE, in order:
// rdma link add fails without crc32_generic; veth carries rxe0 and rxe1;
// the rest serve rdma_cm and umad users.
var rdmaModules = []string{
	"crc32_generic", "ib_core", "ib_uverbs", "udp_tunnel", "ip6_udp_tunnel", "rdma_rxe",
	"veth", "dummy",
	"ib_cm", "iw_cm", "configfs", "rdma_cm", "rdma_ucm", "ib_umad",
}

// ninepModules are loaded only for the -out share (virtio-9p).
var ninepModules = []string{"virtio_pci", "9pnet_virtio", "9p"}

// modName turns a module file path or name into the kernel's module name:
// no directory, no .ko, underscores for dashes.
func modName(p string) string {
	p = path.Base(p)
	p = strings.TrimSuffix(p, ".ko")
	return strings.ReplaceAll(p, "-", "_")
}

// A moduleIndex holds modules.dep and modules.builtin of one kernel.
type moduleIndex struct {
	deps    map[string][]string // module file (relative) -> files it needs
	file    map[string]string   // module name -> file
	builtin map[string]bool     // names of modules built into the kernel
}

// parseModulesDep reads modules.dep ("file: dep dep...") and, when builtin is
// not nil, modules.builtin (one file per line).
func parseModulesDep(dep, builtin io.Reader) (*moduleIndex, error) {
	ix := &moduleIndex{deps: map[string][]string{}, file: map[string]string{}, builtin: map[string]bool{}}
	s := bufio.NewScanner(dep)
	for s.Scan() {
		file, rest, ok := strings.Cut(s.Text(), ":")
		if !ok {
			continue
		}
		ix.deps[file] = strings.Fields(rest)
		ix.file[modName(file)] = file
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	if builtin != nil {
		s = bufio.NewScanner(builtin)
		for s.Scan() {
			if l := strings.TrimSpace(s.Text()); l != "" {
				ix.builtin[modName(l)] = true
			}
		}
		if err := s.Err(); err != nil {
			return nil, err
		}
	}
	return ix, nil
}

// loadOrder returns the module files to load, in an order that loads every
// module after the modules it needs, for the named modules (in the given
// order where dependencies allow). Built-in modules are skipped; a module
// that is neither built in nor in modules.dep is an error.
func (ix *moduleIndex) loadOrder(names []string) ([]string, error) {
	var order []string
	done := map[string]bool{}
	var visit func(file string, stack []string) error
	visit = func(file string, stack []string) error {
		if done[file] {
			return nil
		}
		for _, s := range stack {
			if s == file {
				return fmt.Errorf("module dependency cycle: %s", strings.Join(append(stack, file), " -> "))
			}
		}
		for _, d := range ix.deps[file] {
			if err := visit(d, append(stack, file)); err != nil {
				return err
			}
		}
		done[file] = true
		order = append(order, file)
		return nil
	}
	for _, n := range names {
		n = modName(n)
		file, ok := ix.file[n]
		if !ok {
			if ix.builtin[n] {
				continue
			}
			return nil, fmt.Errorf("kernel module %s: not in modules.dep and not built in", n)
		}
		if err := visit(file, nil); err != nil {
			return nil, err
		}
	}
	return order, nil
}
