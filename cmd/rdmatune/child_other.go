//go:build !linux

package main

import "syscall"

// childAttr: only Linux can tie the command's life to rdmatune's.
func childAttr() *syscall.SysProcAttr { return nil }
