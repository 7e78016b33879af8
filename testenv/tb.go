package testenv

// TB is the part of testing.TB that the helpers use; *testing.T and
// *testing.B satisfy it. An interface of this package's own, so that the
// commands that read the same RDMABENCH_ variables (rdmapeer, rdmainfo)
// use this package without linking the testing package into a server.
type TB interface {
	Helper()
	Cleanup(func())
	Errorf(format string, args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
}
