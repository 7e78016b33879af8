//go:build linux

package rdmacore

import "golang.org/x/sys/unix"

// WaitReadable waits up to timeoutMs milliseconds (-1: for ever) for fd
// to be readable: a completion channel's or an rdma_cm event channel's
// descriptor, both non-blocking. An interrupted wait returns nil, as does
// one that timed out: the caller reads the channel again and checks its
// own deadline.
func WaitReadable(fd int, timeoutMs int) error {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	_, err := unix.Poll(fds, timeoutMs)
	if err == unix.EINTR {
		return nil
	}
	return err
}
