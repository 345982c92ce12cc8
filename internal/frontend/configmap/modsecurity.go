package configmap

import (
	"fmt"
	"strconv"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/modsec"
)

// modSecurityKeys read ingress-nginx's ModSecurity keys. Parse reads keys
// in sorted order, so enable-modsecurity is known when the others are
// read: their errors close the paths only when ModSecurity runs.
var modSecurityKeys = keyParsers{
	"enable-modsecurity": func(c *model.Config, v string) error {
		on, err := strconv.ParseBool(v)
		if err != nil {
			// Whether every path was meant to be inspected is unknown.
			return failClosed{err}
		}
		c.ModSecurity.Enabled = on
		return nil
	},
	"enable-owasp-modsecurity-crs": func(c *model.Config, v string) error {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return closedIfModSecurity(c, err)
		}
		c.ModSecurity.CRS = on
		return nil
	},
	"modsecurity-snippet": func(c *model.Config, v string) error {
		rules, err := parseModSecuritySnippet(v)
		if err != nil {
			return closedIfModSecurity(c, err)
		}
		c.ModSecurity.Rules = rules
		return nil
	},
}

// closedIfModSecurity closes every path when ModSecurity runs for every
// Ingress: it would run without what the key asks.
func closedIfModSecurity(c *model.Config, err error) error {
	if c.ModSecurity.Enabled {
		return failClosed{err}
	}
	return err
}

// parseModSecuritySnippet reads the ConfigMap's snippet. It replaces the
// base configuration unless it includes it; then the base configuration's
// rule ids are taken.
func parseModSecuritySnippet(v string) (*model.SecRules, error) {
	rules, err := modsec.Parse(v, modsec.Options{Reserved: []model.SecIDRange{model.SecCRSIDs}})
	if err != nil {
		return nil, err
	}
	if rules.Includes(model.SecIncludeBase) {
		for _, id := range rules.IDs() {
			if model.SecBaseIDs.Contains(id) {
				return nil, fmt.Errorf("rule id %d is the base configuration's, which the snippet includes", id)
			}
		}
	}
	return rules, nil
}
