package configmap

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/internal/model"
)

// requestKeys are the keys of request handling: client connections and
// header buffers, redirects, request IDs, upstream keepalive, workers and
// the error log.
var requestKeys = keyParsers{
	"keep-alive": func(c *model.Config, v string) error {
		d, err := model.ParseSeconds(v)
		if err == nil {
			c.KeepAlive = d
		}
		return err
	},
	"keep-alive-requests":       intKey(func(c *model.Config) *int { return &c.KeepAliveRequests }, 1, 1<<30),
	"client-header-buffer-size": byteKey(func(c *model.Config) *int64 { return &c.ClientHeaderBufferSize }, 128, 1<<20),
	"large-client-header-buffers": func(c *model.Config, v string) error {
		b, err := parseHeaderBuffers(v)
		if err == nil {
			c.LargeClientHeaderBuffers = b
		}
		return err
	},
	"client-header-timeout": timeoutKey(func(c *model.Config) *time.Duration { return &c.ClientHeaderTimeout }),
	"client-body-timeout":   timeoutKey(func(c *model.Config) *time.Duration { return &c.ClientBodyTimeout }),
	"http-redirect-code": func(c *model.Config, v string) error {
		switch v {
		case "301", "302", "307", "308":
			c.HTTPRedirectCode, _ = strconv.Atoi(v)
			return nil
		}
		return fmt.Errorf("want 301, 302, 307 or 308")
	},
	"server-tokens":                 boolKey(func(c *model.Config) *bool { return &c.ServerTokens }),
	"enable-underscores-in-headers": boolKey(func(c *model.Config) *bool { return &c.UnderscoresInHeaders }),
	"generate-request-id":           boolKey(func(c *model.Config) *bool { return &c.GenerateRequestID }),
	"upstream-keepalive-timeout":    timeoutKey(func(c *model.Config) *time.Duration { return &c.UpstreamKeepaliveTimeout }),
	"upstream-keepalive-requests":   intKey(func(c *model.Config) *int { return &c.UpstreamKeepaliveRequests }, 1, 1<<30),
	// ingress-nginx's name for worker-connections. Keys are applied in
	// sorted order, so worker-connections wins when both are set. 0 means
	// three quarters of the worker open files limit, as in ingress-nginx.
	"max-worker-connections": func(c *model.Config, v string) error {
		if v == "0" {
			c.WorkerConnections = 0
			return nil
		}
		n, err := parseIntIn(v, 64, 1<<20)
		if err != nil {
			return fmt.Errorf("want 0 or an integer from 64 to %d", 1<<20)
		}
		c.WorkerConnections = n
		return nil
	},
	"max-worker-open-files": func(c *model.Config, v string) error {
		if v == "0" {
			c.MaxWorkerOpenFiles = 0
			return nil
		}
		n, err := parseIntIn(v, 1024, 1<<24)
		if err != nil {
			return fmt.Errorf("want 0 (automatic) or an integer from 1024 to %d", 1<<24)
		}
		c.MaxWorkerOpenFiles = n
		return nil
	},
	"error-log-level": func(c *model.Config, v string) error {
		l := model.LogLevel(v)
		if !l.Valid() {
			return fmt.Errorf("want one of debug, info, notice, warn, error, crit, alert or emerg")
		}
		c.ErrorLogLevel = l
		return nil
	},
}

// parseHeaderBuffers parses large-client-header-buffers: a count from 1
// to 128 and a size from 1k to 1m, separated by spaces or tabs ("4 8k").
func parseHeaderBuffers(v string) (model.HeaderBuffers, error) {
	want := fmt.Errorf("want a count from 1 to 128 and a size from 1k to 1m, such as 4 8k")
	f := strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == '\t' })
	if len(f) != 2 {
		return model.HeaderBuffers{}, want
	}
	n, err := parseIntIn(f[0], 1, 128)
	if err != nil {
		return model.HeaderBuffers{}, want
	}
	size, err := model.ParseSize(f[1])
	if err != nil || size < 1<<10 || size > 1<<20 {
		return model.HeaderBuffers{}, want
	}
	return model.HeaderBuffers{Count: n, Size: size}, nil
}

// Field parsers shared by the areas' keys.

func boolKey(field func(*model.Config) *bool) func(*model.Config, string) error {
	return func(c *model.Config, v string) error {
		b, err := model.ParseBool(v)
		if err == nil {
			*field(c) = b
		}
		return err
	}
}

func intKey(field func(*model.Config) *int, lo, hi int) func(*model.Config, string) error {
	return func(c *model.Config, v string) error {
		n, err := parseIntIn(v, lo, hi)
		if err == nil {
			*field(c) = n
		}
		return err
	}
}

// byteKey parses a size (model.ParseSize) from lo to hi bytes.
func byteKey(field func(*model.Config) *int64, lo, hi int64) func(*model.Config, string) error {
	return func(c *model.Config, v string) error {
		n, err := model.ParseSize(v)
		if err != nil {
			return err
		}
		if n < lo || n > hi {
			return fmt.Errorf("want a size from %s to %s", model.FormatSize(lo), model.FormatSize(hi))
		}
		*field(c) = n
		return nil
	}
}

// timeoutKey parses a timeout (model.ParseTimeout): whole seconds or a
// duration with a unit ms, s, m or h, more than 0 and at most 24h.
func timeoutKey(field func(*model.Config) *time.Duration) func(*model.Config, string) error {
	return func(c *model.Config, v string) error {
		d, err := model.ParseTimeout(v)
		if err == nil {
			*field(c) = d
		}
		return err
	}
}
