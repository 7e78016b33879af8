package rdmalat

import "github.com/rdmabench/rdmabench/verbs"

// QueryQP reads e's queue pair back (ibv_query_qp).
func QueryQP(e *Endpoint) (verbs.QPAttr, error) { return e.qp.Query() }

// ResponderEndpoint is a loopback pair's responding endpoint.
func ResponderEndpoint(p *Pair) *Endpoint { return responderEndpoint(p) }
