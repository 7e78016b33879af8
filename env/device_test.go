package env

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeProbe is a host with the devices in active (true: has an ACTIVE
// port), each with ports ports.
type fakeProbe struct {
	names  []string
	active map[string]bool
	ports  int
	err    error
}

func (p fakeProbe) Devices() ([]string, error) { return p.names, p.err }
func (p fakeProbe) Active(d string) error {
	if p.active[d] {
		return nil
	}
	return fmt.Errorf("%s has no ACTIVE port", d)
}
func (p fakeProbe) PortCount(string) (int, error) { return p.ports, nil }

var twoDevices = fakeProbe{names: []string{"mlx5_0", "mlx5_1", "rxe0"}, active: map[string]bool{"mlx5_1": true, "rxe0": true}, ports: 1}

func TestFirstActive(t *testing.T) {
	dev, err := FirstActive(twoDevices)
	require.NoError(t, err)
	assert.Equal(t, "mlx5_1", dev, "the first device with an ACTIVE port, not the first device")

	_, err = FirstActive(fakeProbe{})
	assert.ErrorIs(t, err, ErrNoDevice)
	assert.ErrorContains(t, err, "make test")
	_, err = FirstActive(fakeProbe{names: []string{"mlx5_0"}})
	assert.EqualError(t, err, "no usable RDMA device: none has an ACTIVE port: mlx5_0 has no ACTIVE port")
	listErr := errors.New("ibv_get_device_list: function not implemented")
	_, err = FirstActive(fakeProbe{err: listErr})
	assert.ErrorIs(t, err, ErrNoDevice)
	assert.ErrorIs(t, err, listErr)
}

func TestUsable(t *testing.T) {
	dev, err := Usable(twoDevices, Config{})
	require.NoError(t, err)
	assert.Equal(t, "mlx5_1", dev)
	dev, err = Usable(twoDevices, Config{Device: "rxe0"})
	require.NoError(t, err)
	assert.Equal(t, "rxe0", dev)

	_, err = Usable(twoDevices, Config{Device: "mlx9"})
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.EqualError(t, err, "RDMABENCH_DEVICE=mlx9: no such RDMA device (present: [mlx5_0 mlx5_1 rxe0]): file does not exist")
	_, err = Usable(twoDevices, Config{Device: "mlx5_0"})
	assert.EqualError(t, err, "RDMABENCH_DEVICE=mlx5_0: mlx5_0 has no ACTIVE port")
	_, err = Usable(twoDevices, Config{Device: "rxe0", Port: 2})
	assert.ErrorIs(t, err, ErrNoPort)
	assert.EqualError(t, err, "RDMABENCH_PORT=2: rxe0 has ports 1..1; set RDMABENCH_PORT=1 or unset it")
}

func TestPortError(t *testing.T) {
	assert.NoError(t, portError("rxe0", 1, 1))
	assert.NoError(t, portError("mlx5_0", 2, 2))
	err := portError("rxe0", 7, 1)
	assert.EqualError(t, err, "RDMABENCH_PORT=7: rxe0 has ports 1..1; set RDMABENCH_PORT=1 or unset it")
	assert.ErrorIs(t, err, ErrNoPort)
}

func TestSecondDevice(t *testing.T) {
	dev, err := SecondDevice(twoDevices, Config{}, "mlx5_1")
	require.NoError(t, err)
	assert.Equal(t, "rxe0", dev, "mlx5_0 has no ACTIVE port")
	dev, err = SecondDevice(twoDevices, Config{PeerDevice: "mlx5_0"}, "mlx5_1")
	require.NoError(t, err)
	assert.Equal(t, "mlx5_0", dev, "a named peer device is taken as named")
	_, err = SecondDevice(twoDevices, Config{}, "rxe0")
	require.NoError(t, err)
	_, err = SecondDevice(fakeProbe{names: []string{"rxe0"}, active: map[string]bool{"rxe0": true}}, Config{}, "rxe0")
	assert.EqualError(t, err, "no second active RDMA device besides rxe0 (present: [rxe0])")
}

// fakeTB records how Unavailable ended a test.
type fakeTB struct{ fatal, skip string }

func (*fakeTB) Helper()                          {}
func (f *fakeTB) Fatalf(format string, a ...any) { f.fatal = fmt.Sprintf(format, a...) }
func (f *fakeTB) Skipf(format string, a ...any)  { f.skip = fmt.Sprintf(format, a...) }

func TestUnavailable(t *testing.T) {
	why := errors.New("no usable RDMA device: none found")
	for _, tc := range []struct {
		c    Config
		fail bool
	}{
		{Config{}, false},
		{Config{Require: true}, true},
		{Config{Device: "rxe0"}, true},
		{Config{Peer: "nodeB:18515"}, true},
		{Config{PeerDevice: "rxe1"}, false},
	} {
		var tb fakeTB
		Unavailable(&tb, tc.c.Promised(), why)
		if tc.fail {
			assert.Equal(t, "RDMA device required (RDMABENCH_REQUIRE=1, RDMABENCH_DEVICE or RDMABENCH_PEER set) but unusable: "+why.Error(), tb.fatal, "%+v", tc.c)
		} else {
			assert.Equal(t, "skipping: "+why.Error(), tb.skip, "%+v", tc.c)
			assert.Empty(t, tb.fatal)
		}
	}
	assert.False(t, Config{Require: true}.PromisedSecond(), "one device is required, not two")
	assert.True(t, Config{Require: true, InVM: true}.PromisedSecond(), "the VM has rxe1")
	assert.True(t, Config{Require: true, PeerDevice: "mlx5_1"}.PromisedSecond())
	assert.False(t, Config{PeerDevice: "mlx5_1"}.PromisedSecond())
}
