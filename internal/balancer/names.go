package balancer

// Names fixed between the nginx configuration (written by package render)
// and the Lua modules.
const (
	// UpstreamName is the one upstream every HTTP location proxies to.
	UpstreamName = "causeway_balancer"
	// UpstreamTLSName is its twin without keepalive, for TLS backends
	// (see render's tlsUpstream).
	UpstreamTLSName = "causeway_balancer_tls"
	// BackendVariable is the nginx variable (without '$') through which a
	// location names its backend key.
	BackendVariable = "causeway_backend"
	// TriesVariable, set by a location with a Gateway API retry, is the
	// number of tries the balancer grants its requests, the first
	// included; once every endpoint was tried, a retry goes to one
	// already tried. Unset, each endpoint is tried at most once, up to
	// the backend's retries.
	TriesVariable = "causeway_tries"
	// AuthUpstreamName is the upstream external authentication's
	// subrequests to a Service go through; AuthBackendVariable names its
	// backend key there. A subrequest shares its parent's variables, so
	// it must not set BackendVariable.
	AuthUpstreamName    = "causeway_auth_balancer"
	AuthBackendVariable = "causeway_auth_backend"
	// MirrorUpstreamName is the upstream copies of requests to a mirror
	// backend go through; MirrorBackendVariable names its key there, for
	// the same reason.
	MirrorUpstreamName    = "causeway_mirror_balancer"
	MirrorBackendVariable = "causeway_mirror_backend"
	// StateDict is the lua_shared_dict holding the endpoint state.
	StateDict = "causeway_state"
)
