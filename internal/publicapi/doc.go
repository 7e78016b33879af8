// Package publicapi has no code: its test keeps the module's public API
// (every package outside internal/ and cmd/) free of types a user of the
// module cannot name, those of internal packages, and of unsafe.Pointer.
package publicapi
