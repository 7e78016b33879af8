// Package slurm reads what a fleet job needs from Slurm's environment:
// the allocation's nodes and the node a task runs on.
package slurm

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/rdmabench/rdmabench/internal/fleet"
)

// JobNodes returns the allocation's nodes: SLURM_JOB_NODELIST (or the
// older SLURM_NODELIST) expanded, unless list is given.
func JobNodes(list string, getenv func(string) string) ([]string, error) {
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

// SelfNode returns the node this task runs on, as Slurm names it:
// SLURMD_NODENAME, else the SLURM_PROCID-th node of SLURM_STEP_NODELIST
// (one task per node, in node-list order).
func SelfNode(getenv func(string) string) (string, error) {
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

// JobSeed is the job's number (SLURM_JOB_ID), which seeds a sample of
// rounds so that a job's plan can be made again; 1 outside a job.
func JobSeed(getenv func(string) string) uint64 {
	seed, err := strconv.ParseUint(getenv("SLURM_JOB_ID"), 10, 64)
	if err != nil {
		return 1
	}
	return seed
}

// JobDir is a job's default directory: rdmafleet-JOBID in the directory
// the job was submitted from, or rdmafleet-DATE-TIME (now) outside a job.
func JobDir(getenv func(string) string, now time.Time) string {
	if job := getenv("SLURM_JOB_ID"); job != "" {
		return filepath.Join(getenv("SLURM_SUBMIT_DIR"), "rdmafleet-"+job)
	}
	return "rdmafleet-" + now.Format("20060102-150405")
}
