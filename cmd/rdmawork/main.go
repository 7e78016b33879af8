// Command rdmawork compares where two sides' work went: the instructions
// per operation of each function, from the work-profile.txt artifacts the
// benchmarks write under rxevm -insns with go test -artifacts
// (docs/work.md).
//
//	rdmawork diff [-n 20] [-spaces user,kernel] [-min 0.5] OLD NEW
//
// It prints each space's total, then the functions whose instructions per
// operation changed most, either way, as `rxe_requester +312.0 insns/op
// (+2.2%)`. It exits 0, or 2 on bad usage or an unreadable profile.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rdmabench/rdmabench/internal/work"
)

const usage = "usage: rdmawork diff [-n 20] [-spaces user,kernel] [-min 0.5] OLD NEW (two work-profile.txt files)"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "diff" {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	fs := flag.NewFlagSet("rdmawork diff", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 20, "functions to show, the largest changes first (0: all)")
	spaces := fs.String("spaces", "user,kernel", "spaces to compare, comma-separated: user, kernel, kernel-wait, kernel-other (the last two follow time)")
	minDelta := fs.Float64("min", 0.5, "leave out changes smaller than this many insns/op")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if fs.NArg() != 2 || *n < 0 || *minDelta < 0 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	var sp []work.Space
	for _, s := range strings.Split(*spaces, ",") {
		x, err := work.ParseSpace(strings.TrimSpace(s))
		if err != nil {
			fmt.Fprintf(stderr, "rdmawork: -spaces: %v\n", err)
			return 2
		}
		sp = append(sp, x)
	}
	old, err := read(fs.Arg(0))
	if err == nil {
		var new work.Profile
		if new, err = read(fs.Arg(1)); err == nil {
			diff(stdout, old, new, sp, *n, *minDelta)
			return 0
		}
	}
	fmt.Fprintf(stderr, "rdmawork: %v\n", err)
	return 2
}

func read(path string) (work.Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return work.Profile{}, err
	}
	defer f.Close()
	p, err := work.ParseProfile(f)
	if errors.Is(err, work.ErrMalformedProfile) {
		err = fmt.Errorf("%s: %w (want a work-profile.txt from go test -artifacts under rxevm -insns)", path, err)
	}
	return p, err
}

func diff(w io.Writer, old, new work.Profile, sp []work.Space, n int, minDelta float64) {
	fmt.Fprintf(w, "old: %d ops, new: %d ops\n", old.Ops, new.Ops)
	work.WriteDiff(w, old, new, sp, n, minDelta)
}
