// Package envtest holds what the tests of env and of the packages that
// read its variables share. It imports nothing of this module, so env's
// own tests may use it. Only tests import it.
package envtest

// Getenv returns a stand-in for os.Getenv that knows only the pairs in
// kv (name, value, name, value, ...): every other name reads empty.
func Getenv(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}
