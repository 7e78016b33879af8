//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package vm

import "golang.org/x/sys/unix"

// ioctlReadTermios is the ioctl that reads a terminal's settings: it
// fails on anything but a terminal.
const ioctlReadTermios = unix.TIOCGETA
