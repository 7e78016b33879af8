// Command rdmaprogress passes go test -bench output through from stdin to
// stdout unchanged and says on stderr how far the run has got: which
// benchmark and repetition, how many results of how many, and about how
// long is left. make bench runs the benchmarks through it.
//
//	go test -bench=RDMA -count=6 . | rdmaprogress -count 6 -sizes 3 -benchmarks "$(go test -list RDMA .)" > bench.txt
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rdmabench/rdmabench/internal/progress"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("rdmaprogress", flag.ContinueOnError)
	fl.SetOutput(stderr)
	count := fl.Int("count", 1, "the go test -count of the run")
	sizes := fl.Int("sizes", 1, "how many message sizes each benchmark runs (RDMABENCH_SIZES)")
	list := fl.String("benchmarks", "", "the top-level benchmarks that run, as go test -list prints them (space or newline separated)")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fl.NArg() != 0 || *count < 1 || *sizes < 1 {
		fmt.Fprintf(stderr, "rdmaprogress: want -count and -sizes of at least 1 and no arguments; example: go test -bench=RDMA -count=6 . | rdmaprogress -count 6 -sizes 3 -benchmarks \"$(go test -list RDMA .)\"\n")
		return 2
	}
	terminal := false
	if f, ok := stderr.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			terminal = true
		}
	}
	f := progress.Filter{
		Total: progress.Expected(strings.Fields(*list), *sizes, *count), Count: *count,
		Status: stderr, Terminal: terminal,
	}
	if _, err := f.Run(stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "rdmaprogress: %v\n", err)
		return 1
	}
	return 0
}
