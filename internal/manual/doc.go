// Package manual has no code: its tests keep the parts of the manual
// (docs/) that a command produces equal to that command's output. The
// table of what each comparison resolves, in docs/validation.md, is
// rendered from the figures files make validate-ab writes
// (out/validate-ab/figures.txt), kept as they came under
// testdata/figures/; go test ./internal/manual -update rewrites it. The
// rules of who may import whom that docs/architecture.md states are
// checked on the source tree.
package manual
