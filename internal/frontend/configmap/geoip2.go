package configmap

import (
	"time"

	"github.com/causeway/causeway/internal/model"
)

// geoIP2Keys are use-geoip2 and its reload interval; the databases come
// from the controller's --geoip2-dir (build.Options.GeoIP2Databases).
var geoIP2Keys = keyParsers{
	"use-geoip2": boolKey(func(c *model.Config) *bool { return &c.GeoIP2.Enabled }),
	"geoip2-autoreload-in-minutes": func(c *model.Config, v string) error {
		n, err := parseIntIn(v, 0, 7*24*60)
		c.GeoIP2.AutoReload = time.Duration(n) * time.Minute
		return err
	},
}

// geoIP2Readable lets the snippets read the $geoip2_* variables when the
// ConfigMap turns GeoIP2 on: they are defined then, empty where no
// database sets them. It runs before the keys are parsed, since the
// snippet keys sort ahead of use-geoip2.
func geoIP2Readable(c *model.Config, data map[string]string) {
	if on, err := model.ParseBool(data["use-geoip2"]); err == nil && on {
		c.Defaults.SnippetVariables = append(c.Defaults.SnippetVariables, model.GeoIP2VariableNames()...)
	}
}
