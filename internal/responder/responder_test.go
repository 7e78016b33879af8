package responder

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type fakeEndpoint struct{ name string }
type fakeInfo struct{ qpn uint32 }

// For returns what Register recorded for the same types, and panics,
// saying why, for others (a caller that did not import rdmalat).
func TestRegisterFor(t *testing.T) {
	old := registered
	t.Cleanup(func() { registered = old })
	Register(Hooks[*fakeEndpoint, fakeInfo]{
		AcceptCM: func(_ context.Context, ep *fakeEndpoint, _ Listener, cookie uint64) (fakeInfo, error) {
			return fakeInfo{qpn: uint32(len(ep.name)) + uint32(cookie)}, nil
		},
	})
	h := For[*fakeEndpoint, fakeInfo]()
	info, err := h.AcceptCM(t.Context(), &fakeEndpoint{"rxe0"}, nil, 3)
	assert.NoError(t, err)
	assert.Equal(t, fakeInfo{qpn: 7}, info)
	assert.PanicsWithValue(t, "responder: no hooks registered for these types (rdmalat registers them for *rdmalat.Endpoint and rdmalat.PeerInfo)",
		func() { For[fakeEndpoint, fakeInfo]() })
}
