// Package configmap reads the controller's ConfigMap (ingress-nginx's key
// names) into model.Config. Every key it reads has a parser; a key of
// ingress-nginx's without one (keys.go), an unknown key and a bad value
// each keep the default and are a Problem on the ConfigMap.
package configmap

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/model"
)

var sizeRE = regexp.MustCompile(`^([0-9]{1,9})([kKmMgG]?)$`)

// configKeys maps each ConfigMap key to its parser. A value that fails to
// parse keeps the default and raises a model.Problem; so does a key without
// a parser. keys.go lists every key with its status. Each area's parsers
// live in a map of their own, merged here.
var configKeys = mergeKeys(coreKeys, accessLogKeys, listenerTLSKeys, realIPKeys, compressionKeys, requestKeys, headerKeys, limitKeys, accessKeys, extAuthKeys, snippetKeys, tracingKeys, annotationKeys, modSecurityKeys, resolverKeys, geoIP2Keys)

// keyParsers maps ConfigMap keys to their parsers.
type keyParsers = map[string]func(*model.Config, string) error

// mergeKeys joins the areas' parser maps; a key in two is a programming
// error.
func mergeKeys(areas ...keyParsers) keyParsers {
	out := keyParsers{}
	for _, a := range areas {
		for k, p := range a {
			if _, dup := out[k]; dup {
				panic("configmap: key parsed twice: " + k)
			}
			out[k] = p
		}
	}
	return out
}

var coreKeys = keyParsers{
	"global-allowed-response-headers": func(c *model.Config, v string) error {
		names, err := parseHeaderNames(v, 256)
		if err == nil {
			c.AllowedResponseHeaders = names
		}
		return err
	},
	"ssl-redirect": func(c *model.Config, v string) (err error) {
		c.SSLRedirect, err = strconv.ParseBool(v)
		return err
	},
	"worker-processes": func(c *model.Config, v string) error {
		if v == "auto" {
			c.WorkerProcesses = 0
			return nil
		}
		n, err := parseIntIn(v, 1, 256)
		c.WorkerProcesses = n
		return err
	},
	"worker-connections": func(c *model.Config, v string) (err error) {
		c.WorkerConnections, err = parseIntIn(v, 64, 1<<20)
		return err
	},
	"worker-shutdown-timeout": durationKey(func(c *model.Config) *time.Duration { return &c.WorkerShutdownTimeout }),
	"disable-access-log": func(c *model.Config, v string) error {
		off, err := strconv.ParseBool(v)
		c.AccessLog = !off
		return err
	},
	"proxy-connect-timeout": durationKey(func(c *model.Config) *time.Duration { return &c.ProxyConnectTimeout }),
	"proxy-read-timeout":    durationKey(func(c *model.Config) *time.Duration { return &c.ProxyReadTimeout }),
	"proxy-send-timeout":    durationKey(func(c *model.Config) *time.Duration { return &c.ProxySendTimeout }),
	"proxy-body-size": func(c *model.Config, v string) error {
		m := sizeRE.FindStringSubmatch(v)
		if m == nil {
			return fmt.Errorf("want a size such as 1m, 512k or 0")
		}
		n, _ := strconv.ParseInt(m[1], 10, 64) // at most 9 digits
		c.ProxyBodySize = n << map[string]int{"": 0, "k": 10, "m": 20, "g": 30}[strings.ToLower(m[2])]
		return nil
	},
	"load-balance": func(c *model.Config, v string) error {
		m := model.BalanceMethod(v)
		if m == model.CHash || m == model.Sticky {
			return fmt.Errorf("%s needs per-Service options; set it with the %s annotation", v, "causeway.io/load-balance")
		}
		if !m.Valid() {
			return fmt.Errorf("unknown method %q", model.Truncate(v))
		}
		c.LoadBalance = m
		return nil
	},
	"reload-free-certificates": func(c *model.Config, v string) (err error) {
		c.ReloadFreeCertificates, err = strconv.ParseBool(v)
		return err
	},
	"reload-free-hosts": func(c *model.Config, v string) (err error) {
		c.ReloadFreeHosts, err = strconv.ParseBool(v)
		return err
	},
	"upstream-keepalive-connections": func(c *model.Config, v string) (err error) {
		c.UpstreamKeepalive, err = parseIntIn(v, 0, 100000)
		return err
	},
}

// durationKey parses a Go duration ("30s") or a bare number of seconds,
// rounded to whole seconds for nginx, between 1s and 24h.
func durationKey(field func(*model.Config) *time.Duration) func(*model.Config, string) error {
	return func(c *model.Config, v string) error {
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

// Parse reads the controller's ConfigMap (nil means defaults).
func Parse(cm *corev1.ConfigMap) (model.Config, []model.Problem) {
	cfg := model.DefaultConfig()
	if cm == nil {
		return cfg, nil
	}
	ref := model.ObjectRef{Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name, UID: string(cm.UID)}
	keys := make([]string, 0, len(cm.Data))
	for k := range cm.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	geoIP2Readable(&cfg, cm.Data)
	var problems []model.Problem
	for _, k := range keys {
		parse, ok := configKeys[k]
		if !ok {
			problems = append(problems, model.Problem{Object: ref, Reason: model.ReasonInvalidConfig, Message: unparsedMessage(k)})
			continue
		}
		// Parse into a copy so a failed parse cannot leave a partial value.
		next := cfg
		if err := parse(&next, cm.Data[k]); isFailClosed(err) {
			cfg.FailClosed = append(cfg.FailClosed, k)
			problems = append(problems, model.Problem{Object: ref, Reason: model.ReasonInvalidConfig,
				Message: fmt.Sprintf("key %q: value %q: %v; every path of every %s answers 503 rather than being served without it", k, model.Truncate(cm.Data[k]), err, closedScope(k))})
			continue
		} else if err != nil {
			var closed closedLocations
			if errors.As(err, &closed) {
				cfg.ClosedLocations = closed.locs
			}
			problems = append(problems, model.Problem{Object: ref, Reason: model.ReasonInvalidConfig,
				Message: fmt.Sprintf("key %q: value %q: %v; the default is used", k, model.Truncate(cm.Data[k]), err)})
			continue
		}
		cfg = next
	}
	if cfg.GlobalAuth != nil && cfg.GlobalAuth.URL == "" && !slices.Contains(cfg.FailClosed, "global-auth-url") {
		problems = append(problems, model.Problem{Object: ref, Reason: model.ReasonInvalidConfig,
			Message: "the global-auth-* keys only apply with global-auth-url; ignored"})
	}
	finishGlobalAuth(&cfg)
	for _, msg := range tracingProblems(&cfg) {
		problems = append(problems, model.Problem{Object: ref, Reason: model.ReasonInvalidConfig, Message: msg})
	}
	for _, msg := range annotations.UnusedDefaults(&cfg.Defaults) {
		problems = append(problems, model.Problem{Object: ref, Reason: model.ReasonInvalidConfig, Message: msg})
	}
	return cfg, problems
}

// HTTPLevelKeys are the fail-closed keys that apply at nginx's http level,
// to VirtualServer routes as to Ingress paths: when one of them is
// refused, both close.
var HTTPLevelKeys = []string{"block-cidrs", "block-user-agents", "block-referers"}

// closedScope says what a refused fail-closed key closes.
func closedScope(key string) string {
	if slices.Contains(HTTPLevelKeys, key) {
		return "Ingress and every VirtualServer route"
	}
	return "Ingress"
}
