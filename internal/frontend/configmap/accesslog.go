package configmap

import (
	"github.com/causeway/causeway/internal/model"
)

// accessLogKeys are the access log's keys (disable-access-log is in
// configmap.go). Their values are checked by model.ParseLogFormat and
// model.ParseSkipLogPaths; the renderer prints only what those accept.
var accessLogKeys = map[string]func(*model.Config, string) error{
	"log-format-upstream": func(c *model.Config, v string) (err error) {
		c.LogFormat, err = model.ParseLogFormat(v)
		return err
	},
	"log-format-escape-json": func(c *model.Config, v string) (err error) {
		c.LogEscapeJSON, err = model.ParseBool(v)
		return err
	},
	"log-format-escape-none": func(c *model.Config, v string) (err error) {
		c.LogEscapeNone, err = model.ParseBool(v)
		return err
	},
	"skip-access-log-urls": func(c *model.Config, v string) (err error) {
		c.SkipLogPaths, err = model.ParseSkipLogPaths(v)
		return err
	},
	"access-log-params": func(c *model.Config, v string) (err error) {
		c.LogParams, err = model.ParseAccessLogParams(v)
		return err
	},
	"enable-access-log-for-default-backend": func(c *model.Config, v string) (err error) {
		c.LogDefaultBackend, err = model.ParseBool(v)
		return err
	},
}
