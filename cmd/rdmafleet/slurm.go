package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/fleet"
)

// jobNodes returns the allocation's nodes: SLURM_JOB_NODELIST (or the
// older SLURM_NODELIST) expanded, unless list is given.
func jobNodes(list string, getenv func(string) string) ([]string, error) {
	from := "-nodes"
	if list == "" {
		from, list = "SLURM_JOB_NODELIST", getenv("SLURM_JOB_NODELIST")
		if list == "" {
			from, list = "SLURM_NODELIST", getenv("SLURM_NODELIST")
		}
	}
	if list == "" {
		return nil, errors.New("no node list: run inside a Slurm allocation (sbatch -N 4 --ntasks-per-node=1 rdmafleet.sbatch) or name the nodes with -nodes 'n[1-4]'")
	}
	nodes, err := fleet.ExpandHostlist(list)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	return nodes, nil
}

// selfNode returns the node this task runs on, as Slurm names it:
// SLURMD_NODENAME, else the SLURM_PROCID-th node of SLURM_STEP_NODELIST
// (one task per node, in node-list order).
func selfNode(getenv func(string) string) (string, error) {
	if n := getenv("SLURMD_NODENAME"); n != "" {
		return n, nil
	}
	list, id := getenv("SLURM_STEP_NODELIST"), getenv("SLURM_PROCID")
	if list == "" || id == "" {
		return "", errors.New("neither SLURMD_NODENAME nor SLURM_STEP_NODELIST and SLURM_PROCID are set: the agent runs under srun (rdmafleet run starts it), or give -node NAME")
	}
	nodes, err := fleet.ExpandHostlist(list)
	if err != nil {
		return "", fmt.Errorf("SLURM_STEP_NODELIST: %w", err)
	}
	i, err := strconv.Atoi(id)
	if err != nil || i < 0 || i >= len(nodes) {
		return "", fmt.Errorf("SLURM_PROCID=%q: want a task number below %d, the nodes of SLURM_STEP_NODELIST=%s (run one task per node: --ntasks-per-node=1)", id, len(nodes), list)
	}
	return nodes[i], nil
}

// readHosts reads a file in /etc/hosts format ("address name [alias...]",
// # comments) into a map from name to address.
func readHosts(path string) (map[string]string, error) {
	hosts := map[string]string{}
	if path == "" {
		return hosts, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("-hosts: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		if len(f) < 2 {
			return nil, fmt.Errorf("%s:%d: %q: want \"address name...\" as in /etc/hosts", path, line, text)
		}
		for _, name := range f[1:] {
			hosts[name] = f[0]
		}
	}
	return hosts, sc.Err()
}
