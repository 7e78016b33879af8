package env

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCPUList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		err  string
	}{
		{"", nil, ""},
		{" 0-3,8,10-11\n", []int{0, 1, 2, 3, 8, 10, 11}, ""}, // sysfs ends its lists with a newline
		{"3,2", []int{3, 2}, ""},                             // the order given: initiator, responder
		{"5 , 7", []int{5, 7}, ""},
		{"8191", []int{8191}, ""},
		{"x,5", nil, `not a CPU list: "x": "x" is not a CPU number`},
		{"-1", nil, `not a CPU list: "-1": "" is not a CPU number`},
		{"1,", nil, `not a CPU list: "": "" is not a CPU number`},
		{"3-1", nil, `not a CPU list: "3-1" runs backwards (write 1-3)`},
		{"1-2,2", nil, "not a CPU list: a CPU named twice (CPU 2)"},
		{"8192", nil, `not a CPU list: "8192": CPU 8192 is above 8191, the most a kernel has`},
		{"0-4000000000", nil, `not a CPU list: "0-4000000000": CPU 4000000000 is above 8191, the most a kernel has`},
	} {
		got, err := ParseCPUList(tc.in)
		if tc.err != "" {
			assert.EqualError(t, err, tc.err, "%q", tc.in)
			assert.ErrorIs(t, err, ErrCPUList)
		} else {
			assert.NoError(t, err, "%q", tc.in)
		}
		assert.Equal(t, tc.want, got, "%q", tc.in)
	}
}

func TestFormatCPUList(t *testing.T) {
	assert.Equal(t, "0-3,8,10-11", FormatCPUList([]int{11, 10, 8, 3, 2, 1, 0, 0}))
	assert.Equal(t, "", FormatCPUList(nil))
	for _, s := range []string{"0-3,8,10-11", "7", "0,2,4-5"} {
		cpus, err := ParseCPUList(s)
		require.NoError(t, err)
		assert.Equal(t, s, FormatCPUList(cpus), "a sorted list reads back as written")
	}
}

// The zero CPU is unpinned; CPU 0 is PinTo(0), a CPU like any other.
func TestCPU(t *testing.T) {
	var zero CPU
	id, pinned := zero.ID()
	assert.Equal(t, 0, id)
	assert.False(t, pinned)
	assert.False(t, zero.Pinned())
	assert.Equal(t, "unpinned", zero.String())
	id, pinned = PinTo(0).ID()
	assert.Equal(t, 0, id)
	assert.True(t, pinned)
	assert.Equal(t, "0", PinTo(0).String())
	assert.NotEqual(t, zero, PinTo(0))
	assert.Equal(t, PinTo(3), PinTo(3), "comparable: a map key, ==")
	assert.Panics(t, func() { PinTo(-1) })

	// The rdmabench-cpus configuration line, as before the type: pinned
	// CPUs in list form, sorted; "unpinned" when none pins.
	assert.Equal(t, "2-3", FormatCPUs(PinTo(3), PinTo(2)))
	assert.Equal(t, "0,5", FormatCPUs(PinTo(5), PinTo(0)))
	assert.Equal(t, "4", FormatCPUs(PinTo(4), CPU{}))
	assert.Equal(t, "unpinned", FormatCPUs(CPU{}, CPU{}))
	assert.Equal(t, "unpinned", FormatCPUs())
}

func TestParseCPUs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		none bool
		err  string
	}{
		{"", nil, false, ""},
		{" none ", nil, true, ""},
		{"2,3", []int{2, 3}, false, ""},
		{"3,2", []int{3, 2}, false, ""},
		{"2-3", []int{2, 3}, false, ""},
		{"0", []int{0}, false, ""},
		{"1,1", nil, false, `RDMABENCH_CPUS="1,1" pins both busy-polling threads to one CPU, which starves one of them; name two CPUs`},
		{"a", nil, false, `RDMABENCH_CPUS="a": not a CPU list: "a": "a" is not a CPU number (example: RDMABENCH_CPUS=2,3 pins the initiator to CPU 2 and the responder to 3; RDMABENCH_CPUS=none disables pinning)`},
		{"1,2,3", nil, false, `RDMABENCH_CPUS="1,2,3" names 3 CPUs; give one (initiator) or two (initiator,responder)`},
		{"0-7", nil, false, `RDMABENCH_CPUS="0-7" names 8 CPUs; give one (initiator) or two (initiator,responder)`},
	} {
		got, none, err := ParseCPUs(VarCPUs, tc.in)
		if tc.err != "" {
			assert.EqualError(t, err, tc.err)
		} else {
			assert.NoError(t, err)
		}
		assert.Equal(t, tc.want, got, "%q", tc.in)
		assert.Equal(t, tc.none, none, "%q", tc.in)
	}
}

// TestPinFrom: the default pair is the last two allowed CPUs; one named
// CPU replaces the initiator, and the responder moves to the other of the
// last two when they would collide; loopback refuses fewer than two.
func TestPinFrom(t *testing.T) {
	for _, tc := range []struct {
		named, allowed []int
		want           [2]CPU
		err            string
	}{
		{nil, []int{0, 1, 2, 3}, [2]CPU{PinTo(2), PinTo(3)}, ""},
		{nil, []int{0, 5, 9}, [2]CPU{PinTo(5), PinTo(9)}, ""},
		{nil, []int{0, 1}, [2]CPU{PinTo(0), PinTo(1)}, ""}, // CPU 0 is a CPU, not "unset"
		{[]int{1}, []int{0, 1, 2, 3}, [2]CPU{PinTo(1), PinTo(3)}, ""},
		{[]int{3}, []int{0, 1, 2, 3}, [2]CPU{PinTo(3), PinTo(2)}, ""},
		{[]int{9}, []int{0, 5, 9}, [2]CPU{PinTo(9), PinTo(5)}, ""},
		{nil, []int{4}, [2]CPU{}, "loopback needs two CPUs for its two busy-polling threads, this process may use 4 (set RDMABENCH_CPUS=none to run unpinned anyway)"},
	} {
		got, err := pinFrom(tc.named, tc.allowed, nil)
		if tc.err != "" {
			assert.EqualError(t, err, tc.err)
		} else {
			assert.NoError(t, err)
		}
		assert.Equal(t, tc.want, got, "named %v allowed %v", tc.named, tc.allowed)
	}
}

func TestPinCPUs(t *testing.T) {
	got, err := Config{NoPin: true}.PinCPUs()
	require.NoError(t, err)
	assert.Equal(t, [2]CPU{}, got)
	got, err = Config{CPUs: []int{7, 4}}.PinCPUs()
	require.NoError(t, err)
	assert.Equal(t, [2]CPU{PinTo(7), PinTo(4)}, got, "two named CPUs are taken as they are")
	got, err = Config{CPUs: []int{0, 1}}.PinCPUs()
	require.NoError(t, err)
	assert.Equal(t, [2]CPU{PinTo(0), PinTo(1)}, got, "RDMABENCH_CPUS=0,1 is CPU 0 and CPU 1")

	allowed, err := AllowedCPUs()
	require.NoError(t, err)
	def, err := DefaultCPUs()
	require.NoError(t, err)
	assert.Equal(t, allowed[max(0, len(allowed)-2):], def)
	got, err = Config{}.PinCPUs()
	if len(allowed) < 2 {
		assert.Error(t, err)
		got, err = Config{Peer: "nodeB:18515"}.PinCPUs()
		require.NoError(t, err, "two-node mode runs unpinned rather than fail")
		assert.Equal(t, [2]CPU{}, got)
		return
	}
	require.NoError(t, err)
	assert.Equal(t, [2]CPU{PinTo(def[0]), PinTo(def[1])}, got)
}

// PinThread pins the calling thread to one CPU and gives its mask back;
// an unpinned CPU changes no mask.
func TestPinThread(t *testing.T) {
	allowed, err := AllowedCPUs()
	require.NoError(t, err)
	last := allowed[len(allowed)-1]
	done := make(chan error)
	go func() {
		restore, err := PinTo(last).PinThread()
		if err != nil {
			done <- err
			return
		}
		mask, err := AllowedCPUs() // this thread's mask
		restore()
		after, err2 := AllowedCPUs()
		switch {
		case err != nil || err2 != nil:
			done <- errors.Join(err, err2)
		case len(mask) != 1 || mask[0] != last:
			done <- errors.New("pinned thread's mask is " + FormatCPUList(mask))
		case FormatCPUList(after) != FormatCPUList(allowed):
			done <- errors.New("mask after restore is " + FormatCPUList(after))
		default:
			done <- nil
		}
	}()
	require.NoError(t, <-done)

	_, err = PinTo(maxCPU).PinThread()
	assert.ErrorContains(t, err, "pinning to CPU 8191: ")

	restore, err := CPU{}.PinThread()
	require.NoError(t, err)
	mask, err := AllowedCPUs()
	restore()
	require.NoError(t, err)
	assert.Equal(t, allowed, mask)
}
