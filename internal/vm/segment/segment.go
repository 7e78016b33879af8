// Package segment is the Ethernet of rxevm's multi-VM fleets: a hub in the
// rxevm process that forwards every frame a node sends to every other node
// over one datagram socketpair per node, so that the network has no address
// on the host at all.
package segment

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// A Segment is the fleet's Ethernet: rxevm itself forwards every frame a
// node sends to every other node (a hub), over one datagram socketpair per
// node, the node's end passed to QEMU as -netdev dgram,local.type=fd. No
// address or port exists on the host, so no other process, local user or
// host can read or inject frames (a multicast group on loopback, the
// earlier design, let any local user do both).
type Segment struct {
	hub     []*os.File    // rxevm's ends, one per node
	guest   []*os.File    // the nodes' ends, given to QEMU (Guest)
	out     []chan []byte // frames waiting for each node
	readers sync.WaitGroup
	writers sync.WaitGroup
}

// queueLen is how many frames wait for a node that is slow to read
// (the kernel queues only net.unix.max_dgram_qlen, 10, per socket); past
// it frames for that node drop, as on a switch, and the others go on.
const queueLen = 512

// netFD is the descriptor number of a node's end in QEMU: after stdin,
// stdout, stderr and the two serial ports (fd 3 and 4).
const netFD = 5

// New makes n connected ports and starts forwarding.
func New(n int) (*Segment, error) {
	s := &Segment{}
	for i := range n {
		fds, err := socketpairCloexec(unix.SOCK_DGRAM)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("segment: socketpair: %w", err)
		}
		// rxevm's end is non-blocking, so that Go's poller does the waits.
		if err := unix.SetNonblock(fds[0], true); err != nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
			s.Close()
			return nil, err
		}
		s.hub = append(s.hub, os.NewFile(uintptr(fds[0]), fmt.Sprintf("segment-hub-%d", i+1)))
		s.guest = append(s.guest, os.NewFile(uintptr(fds[1]), fmt.Sprintf("segment-node-%d", i+1)))
	}
	for i := range s.hub {
		s.out = append(s.out, make(chan []byte, queueLen))
		s.writers.Add(1)
		go s.deliver(i)
	}
	for i := range s.hub {
		s.readers.Add(1)
		go s.forward(i)
	}
	return s, nil
}

// NetArgs are node k's (1-based) NIC arguments.
func (s *Segment) NetArgs(k int) []string {
	return []string{
		"-netdev", fmt.Sprintf("dgram,id=net0,local.type=fd,local.str=%d", netFD),
		"-device", fmt.Sprintf("virtio-net-pci,netdev=net0,mac=52:54:00:77:00:%02x", k),
	}
}

// Guest returns node k's (1-based) end, to pass to QEMU as its fd 5.
func (s *Segment) Guest(k int) *os.File { return s.guest[k-1] }

// forward queues every frame from port i for all the other ports; a full
// queue drops the frame for that port alone.
func (s *Segment) forward(i int) {
	defer s.readers.Done()
	buf := make([]byte, 65536)
	for {
		n, err := s.hub[i].Read(buf)
		if err != nil {
			return // closed
		}
		for j, q := range s.out {
			if j == i {
				continue
			}
			select {
			case q <- append([]byte(nil), buf[:n]...):
			default:
			}
		}
	}
}

// deliver writes port i's queued frames, waiting while its node is busy.
func (s *Segment) deliver(i int) {
	defer s.writers.Done()
	for frame := range s.out[i] {
		s.hub[i].Write(frame) // a closed port: the frame is lost, the queue drains
	}
}

// Close stops forwarding and closes every port.
func (s *Segment) Close() error {
	var errs []error
	for _, f := range s.guest {
		errs = append(errs, f.Close())
	}
	for _, f := range s.hub {
		errs = append(errs, f.Close())
	}
	s.readers.Wait()
	for _, q := range s.out {
		close(q)
	}
	s.writers.Wait()
	return errors.Join(errs...)
}
