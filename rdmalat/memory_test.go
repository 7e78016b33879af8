package rdmalat

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestODPRefusal: perftest's rules for --odp, on capabilities as devices
// report them.
func TestODPRefusal(t *testing.T) {
	none := verbs.ODPCaps{}
	mlx := verbs.ODPCaps{Supported: true, RC: verbs.ODPSend | verbs.ODPRecv | verbs.ODPWrite | verbs.ODPRead, UD: verbs.ODPSend}
	assert.EqualError(t, odpRefusal("rxe0", none, spec.Write, spec.RC),
		"rdmalat: RDMABENCH_ODP=1: rxe0 does not support on-demand paging (ibv_query_device_ex: no IBV_ODP_SUPPORT in odp_caps; ibv_devinfo -v shows its ODP capabilities); unset RDMABENCH_ODP")
	for _, op := range []spec.Op{spec.Write, spec.WriteImm, spec.Read, spec.Send, spec.SendImm} {
		assert.NoError(t, odpRefusal("mlx5_0", mlx, op, spec.RC), op)
	}
	assert.EqualError(t, odpRefusal("mlx5_0", mlx, spec.FetchAdd, spec.RC),
		"rdmalat: RDMABENCH_ODP=1: mlx5_0 supports on-demand paging over rc for Send|Recv|Write|Read only, and fetch_add needs Atomic; unset RDMABENCH_ODP")
	sendOnly := verbs.ODPCaps{Supported: true, RC: verbs.ODPSend}
	assert.ErrorContains(t, odpRefusal("x", sendOnly, spec.Send, spec.RC), "for Send only, and send needs Send|Recv")
	assert.ErrorContains(t, odpRefusal("mlx5_0", mlx, spec.Send, spec.UC), "not available on UC")
	assert.NoError(t, odpRefusal("mlx5_0", mlx, spec.Send, spec.UD), "UD's operations are not checked, as perftest")
}
