package segment

import (
	"bytes"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// recv reads one frame from f within a second; nil when none came.
func recv(t *testing.T, f *os.File) []byte {
	t.Helper()
	f.SetReadDeadline(time.Now().Add(time.Second))
	buf := make([]byte, 2048)
	n, err := f.Read(buf)
	if err != nil {
		return nil
	}
	return buf[:n]
}

// Every frame a node sends reaches every other node, whole, and not the
// sender; the segment has no host address at all.
func TestSegmentForwards(t *testing.T) {
	s, err := New(3)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The test plays the nodes: their ends, non-blocking for deadlines.
	nodes := make([]*os.File, 3)
	for i, g := range s.guest {
		fd, err := unix.Dup(int(g.Fd()))
		if err != nil {
			t.Fatal(err)
		}
		unix.SetNonblock(fd, true)
		nodes[i] = os.NewFile(uintptr(fd), "node")
		defer nodes[i].Close()
	}
	frame := bytes.Repeat([]byte{0xab}, 1514)
	if _, err := nodes[0].Write(frame); err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{1, 2} {
		if got := recv(t, nodes[k]); !bytes.Equal(got, frame) {
			t.Errorf("node%d got %d bytes, want the 1514-byte frame", k+1, len(got))
		}
	}
	if got := recv(t, nodes[0]); got != nil {
		t.Errorf("the sender got its own frame back (%d bytes)", len(got))
	}
	if sa, err := unix.Getsockname(int(s.guest[0].Fd())); err != nil || sa.(*unix.SockaddrUnix).Name != "" && sa.(*unix.SockaddrUnix).Name != "@" {
		t.Errorf("a node's end has a name (%v, %v): others could reach it", sa, err)
	}
	if got := s.NetArgs(2); got[1] != "dgram,id=net0,local.type=fd,local.str=5" || got[3] != "virtio-net-pci,netdev=net0,mac=52:54:00:77:00:02" {
		t.Errorf("NetArgs(2) = %q", got)
	}
}

// A node that stops reading does not stall the others: its frames drop.
func TestSegmentSlowNodeDrops(t *testing.T) {
	s, err := New(3)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fd, _ := unix.Dup(int(s.guest[0].Fd()))
	unix.SetNonblock(fd, true)
	sender := os.NewFile(uintptr(fd), "node1")
	defer sender.Close()
	fd2, _ := unix.Dup(int(s.guest[2].Fd()))
	unix.SetNonblock(fd2, true)
	reader := os.NewFile(uintptr(fd2), "node3")
	defer reader.Close()
	// node2 never reads; node3 drains as it goes.
	got := 0
	for i := range 1000 {
		frame := []byte{byte(i), byte(i >> 8), 1, 2, 3}
		for {
			if _, err := sender.Write(frame); err == nil {
				break
			}
			time.Sleep(time.Millisecond) // the hub's input is full for a moment
		}
		for recv1(reader) {
			got++
		}
	}
	for deadline := time.Now().Add(2 * time.Second); got < 1000 && time.Now().Before(deadline); {
		if recv1(reader) {
			got++
		} else {
			time.Sleep(time.Millisecond)
		}
	}
	if got != 1000 {
		t.Errorf("node3 got %d of 1000 frames while node2 read none", got)
	}
}

func recv1(f *os.File) bool {
	f.SetReadDeadline(time.Now().Add(time.Millisecond))
	var buf [64]byte
	_, err := f.Read(buf[:])
	return err == nil
}
