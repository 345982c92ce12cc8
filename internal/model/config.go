package model

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

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
	// ReloadFreeCertificates has nginx read each host certificate at
	// handshake time, so renewals need no reload. It costs CPU per full
	// handshake (measured: about half the handshake rate of certificates
	// loaded at reload); false trades that for a reload per renewal.
	ReloadFreeCertificates bool
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
	}
}

var sizeRE = regexp.MustCompile(`^([0-9]{1,9})([kKmMgG]?)$`)

// configKeys maps each ConfigMap key to its parser. A value that fails to
// parse keeps the default and raises a Problem; so does an unknown key.
var configKeys = map[string]func(*Config, string) error{
	"ssl-redirect": func(c *Config, v string) (err error) {
		c.SSLRedirect, err = strconv.ParseBool(v)
		return err
	},
	"worker-processes": func(c *Config, v string) error {
		if v == "auto" {
			c.WorkerProcesses = 0
			return nil
		}
		n, err := parseIntIn(v, 1, 256)
		c.WorkerProcesses = n
		return err
	},
	"worker-connections": func(c *Config, v string) (err error) {
		c.WorkerConnections, err = parseIntIn(v, 64, 1<<20)
		return err
	},
	"worker-shutdown-timeout": durationKey(func(c *Config) *time.Duration { return &c.WorkerShutdownTimeout }),
	"disable-access-log": func(c *Config, v string) error {
		off, err := strconv.ParseBool(v)
		c.AccessLog = !off
		return err
	},
	"proxy-connect-timeout": durationKey(func(c *Config) *time.Duration { return &c.ProxyConnectTimeout }),
	"proxy-read-timeout":    durationKey(func(c *Config) *time.Duration { return &c.ProxyReadTimeout }),
	"proxy-send-timeout":    durationKey(func(c *Config) *time.Duration { return &c.ProxySendTimeout }),
	"proxy-body-size": func(c *Config, v string) error {
		m := sizeRE.FindStringSubmatch(v)
		if m == nil {
			return fmt.Errorf("want a size such as 1m, 512k or 0")
		}
		n, _ := strconv.ParseInt(m[1], 10, 64) // at most 9 digits
		c.ProxyBodySize = n << map[string]int{"": 0, "k": 10, "m": 20, "g": 30}[strings.ToLower(m[2])]
		return nil
	},
	"load-balance": func(c *Config, v string) error {
		m := BalanceMethod(v)
		if m == CHash || m == Sticky {
			return fmt.Errorf("%s needs per-Service options; set it with the %s annotation", v, AnnotationLoadBalance)
		}
		if !m.Valid() {
			return fmt.Errorf("unknown method %q", truncate(v))
		}
		c.LoadBalance = m
		return nil
	},
	"reload-free-certificates": func(c *Config, v string) (err error) {
		c.ReloadFreeCertificates, err = strconv.ParseBool(v)
		return err
	},
	"upstream-keepalive-connections": func(c *Config, v string) (err error) {
		c.UpstreamKeepalive, err = parseIntIn(v, 0, 100000)
		return err
	},
}

// durationKey parses a Go duration ("30s") or a bare number of seconds,
// rounded to whole seconds for nginx, between 1s and 24h.
func durationKey(field func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil {
			n, nerr := strconv.Atoi(v)
			if nerr != nil {
				return fmt.Errorf("want a duration such as 30s")
			}
			d = time.Duration(n) * time.Second
		}
		if d < time.Second || d > 24*time.Hour {
			return fmt.Errorf("want a duration between 1s and 24h")
		}
		*field(c) = d.Round(time.Second)
		return nil
	}
}

func parseIntIn(v string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("want an integer from %d to %d", lo, hi)
	}
	return n, nil
}

// parseConfig reads the controller's ConfigMap (nil means defaults).
func parseConfig(cm *corev1.ConfigMap) (Config, []Problem) {
	cfg := DefaultConfig()
	if cm == nil {
		return cfg, nil
	}
	ref := ObjectRef{Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name, UID: string(cm.UID)}
	keys := make([]string, 0, len(cm.Data))
	for k := range cm.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var problems []Problem
	for _, k := range keys {
		parse, ok := configKeys[k]
		if !ok {
			problems = append(problems, Problem{Object: ref, Reason: ReasonInvalidConfig,
				Message: fmt.Sprintf("unknown key %q is ignored", truncate(k))})
			continue
		}
		// Parse into a copy so a failed parse cannot leave a partial value.
		next := cfg
		if err := parse(&next, cm.Data[k]); err != nil {
			problems = append(problems, Problem{Object: ref, Reason: ReasonInvalidConfig,
				Message: fmt.Sprintf("key %q: value %q: %v; the default is used", k, truncate(cm.Data[k]), err)})
			continue
		}
		cfg = next
	}
	return cfg, problems
}
