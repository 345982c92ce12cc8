package configmap

import (
	"errors"
	"net/netip"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// Source address lists: the global defaults of the access annotations and
// the global block lists (model.Config.DefaultAccess, BlockCIDRs,
// BlockUserAgents and BlockReferers).

// maxGlobalCIDRs bounds each list: the defaults are printed in every
// location that uses them.
const maxGlobalCIDRs = 1000

var accessKeys = keyParsers{
	"whitelist-source-range": func(c *model.Config, v string) (err error) {
		c.DefaultAccess.Allow, err = parseSecurityCIDRs(v)
		return err
	},
	"denylist-source-range": func(c *model.Config, v string) (err error) {
		c.DefaultAccess.Deny, err = parseSecurityCIDRs(v)
		return err
	},
	"block-cidrs": func(c *model.Config, v string) (err error) {
		c.BlockCIDRs, err = parseSecurityCIDRs(v)
		return err
	},
	"block-user-agents": func(c *model.Config, v string) (err error) {
		c.BlockUserAgents, err = parseBlockList(v)
		return err
	},
	"block-referers": func(c *model.Config, v string) (err error) {
		c.BlockReferers, err = parseBlockList(v)
		return err
	},
}

// failClosed marks a parse error of a security key: rather than dropping
// the key, which would let in the clients it refuses, Parse records it in
// Config.FailClosed.
type failClosed struct{ err error }

func (f failClosed) Error() string { return f.err.Error() }
func (f failClosed) Unwrap() error { return f.err }

// isFailClosed reports whether a key's parse error closes the paths.
func isFailClosed(err error) bool {
	var f failClosed
	return errors.As(err, &f)
}

// parseSecurityCIDRs reads a source address list of the ConfigMap. An
// empty value is the default, no list, as in ingress-nginx.
func parseSecurityCIDRs(v string) ([]netip.Prefix, error) {
	if strings.Trim(v, " \t") == "" {
		return nil, nil
	}
	l, err := model.ParseCIDRList(v, maxGlobalCIDRs)
	if err != nil {
		return nil, failClosed{err}
	}
	return l, nil
}

// parseBlockList reads block-user-agents or block-referers; an empty value
// is no list.
func parseBlockList(v string) ([]model.HeaderMatch, error) {
	if strings.Trim(v, " \t") == "" {
		return nil, nil
	}
	l, err := model.ParseHeaderMatches(v)
	if err != nil {
		return nil, failClosed{err}
	}
	return l, nil
}
