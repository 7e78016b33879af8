// Command gort is built as a C shared library (go build -buildmode=c-shared)
// and LD_PRELOAD'ed into perftest, so that perftest's process carries a Go
// runtime (its threads, sysmon, signal handlers, a THP-eligible heap) while
// its measured loop stays perftest's own. The directory's leading
// underscore keeps it out of ./... .
package main

import "C"

import "runtime/debug"

var keep []byte

func init() {
	// A live, touched heap of a few MiB, as the benchmark's process has, then
	// FreeOSMemory, which the benchmark calls before it measures.
	keep = make([]byte, 8<<20)
	for i := range keep {
		keep[i] = byte(i)
	}
	debug.FreeOSMemory()
}

func main() {}
