package configmap

import (
	"fmt"

	"github.com/causeway/causeway/internal/model"
)

// Rate and connection limits: the status of refused requests and the
// bandwidth per response. The limits themselves are per Ingress
// (annotations limit-*).

// maxLimitRate bounds limit-rate and limit-rate-after: 1 GiB.
const maxLimitRate = 1 << 30

var limitKeys = keyParsers{
	"limit-req-status-code":  statusKey(func(c *model.Config) *int { return &c.LimitReqStatus }),
	"limit-conn-status-code": statusKey(func(c *model.Config) *int { return &c.LimitConnStatus }),
	"limit-rate":             byteKey(func(c *model.Config) *int64 { return &c.LimitRate }, 0, maxLimitRate),
	"limit-rate-after":       byteKey(func(c *model.Config) *int64 { return &c.LimitRateAfter }, 0, maxLimitRate),
}

// statusKey parses an error status, 400 to 599: nginx's limit_req_status
// and limit_conn_status accept nothing else.
func statusKey(field func(*model.Config) *int) func(*model.Config, string) error {
	return func(c *model.Config, v string) error {
		n, err := parseIntIn(v, 400, 599)
		if err != nil {
			return fmt.Errorf("want a status code from 400 to 599")
		}
		*field(c) = n
		return nil
	}
}
