package model

import "time"

// Config holds the global settings read from the controller's ConfigMap.
// Every field is a parsed, typed value; the renderer never sees the raw
// ConfigMap strings.
type Config struct {
	// SSLRedirect redirects HTTP to HTTPS (308) for hosts listed in TLS.
	SSLRedirect bool
	// WorkerProcesses is 0 for "auto".
	WorkerProcesses int
	// WorkerConnections bounds connections per worker.
	WorkerConnections int
	// WorkerShutdownTimeout bounds how long old workers live after a reload,
	// so that generations of workers holding long-lived connections cannot
	// pile up.
	WorkerShutdownTimeout time.Duration
	// AccessLog enables the access log (to the controller's stderr).
	AccessLog bool
	// Proxy timeouts.
	ProxyConnectTimeout, ProxyReadTimeout, ProxySendTimeout time.Duration
	// ProxyBodySize is nginx's client_max_body_size in bytes; 0 means
	// unlimited.
	ProxyBodySize int64
	// UpstreamKeepalive is the number of idle keepalive connections each
	// worker keeps per upstream.
	UpstreamKeepalive int
	// LoadBalance is the default method for backends whose Service does
	// not choose one.
	LoadBalance BalanceMethod
	// AllowedResponseHeaders are the header names the custom-headers
	// annotation may set (global-allowed-response-headers); none by
	// default, as in ingress-nginx: an Ingress author sets response
	// headers only where the cluster's operator allows it.
	AllowedResponseHeaders []string
	// ReloadFreeCertificates has nginx read each host certificate at
	// handshake time, so renewals need no reload. It costs CPU per full
	// handshake (measured: about half the handshake rate of certificates
	// loaded at reload); false trades that for a reload per renewal.
	ReloadFreeCertificates bool

	// --- Access log (log-format-upstream, log-format-escape-json,
	// log-format-escape-none, skip-access-log-urls,
	// enable-access-log-for-default-backend; AccessLog above is
	// disable-access-log).

	// LogFormat is the access log's format; DefaultLogFormat by default.
	LogFormat LogFormat
	// LogEscapeJSON escapes variable values for JSON; LogEscapeNone
	// escapes nothing and wins over LogEscapeJSON, as in ingress-nginx.
	LogEscapeJSON, LogEscapeNone bool
	// SkipLogPaths are exact URL paths whose requests are not logged.
	SkipLogPaths []string
	// LogDefaultBackend logs the requests that the catch-all server's
	// own default (no Ingress's) answers.
	LogDefaultBackend bool
}

// DefaultConfig is what an absent or empty ConfigMap means.
func DefaultConfig() Config {
	return Config{
		SSLRedirect:            true,
		WorkerProcesses:        0,
		WorkerConnections:      16384,
		WorkerShutdownTimeout:  240 * time.Second,
		AccessLog:              true,
		ProxyConnectTimeout:    5 * time.Second,
		ProxyReadTimeout:       60 * time.Second,
		ProxySendTimeout:       60 * time.Second,
		ProxyBodySize:          1 << 20,
		UpstreamKeepalive:      320,
		LoadBalance:            RoundRobin,
		ReloadFreeCertificates: true,
		LogFormat:              MustLogFormat(DefaultLogFormat),
	}
}
