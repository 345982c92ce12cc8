package balancer

import (
	"fmt"

	"github.com/causeway/causeway/internal/model"
)

// Limits of the payload, the twins of the MAX_* constants in
// lua/causeway/validate.lua (TestLimitsMatchLua compares the two). They bound
// the memory and per-request work of the Lua side; the controller checks
// them with Backend.Validate before a push, so that one backend over a
// limit is left out and reported instead of failing the whole push.
const (
	// Limits the model owns with the option grammars.
	MaxRetries       = model.MaxRetries
	MaxCookieAge     = model.MaxCookieAge
	MaxHashKeyLen    = model.MaxHashKeyLen
	MaxCookieNameLen = model.MaxCookieNameLen
	MaxCookiePathLen = model.MaxCookiePathLen

	// MaxBackends is the number of backends in one state or update.
	MaxBackends = 100000
	// MaxEndpoints is the number of endpoints of one backend. A Kubernetes
	// Service can exceed it; that backend is then left out of the push.
	MaxEndpoints = 10000
	// MaxKeyLen is the length of a backend key.
	MaxKeyLen = 256
	// MaxWeight is an endpoint's largest weight (the smallest is 1).
	MaxWeight = 100
	// MaxGeneration is the largest generation: JSON numbers are exact
	// integers up to 2^53-1 only.
	MaxGeneration = 1<<53 - 1
	// MaxZoneLen is the length of an endpoint's zone.
	MaxZoneLen = 128
)

// DefaultRetries is used when Backend.Retries is nil.
const DefaultRetries = 1

// luaLimits names each limit as validate.lua does.
var luaLimits = map[string]int64{
	"MAX_BACKENDS":        MaxBackends,
	"MAX_ENDPOINTS":       MaxEndpoints,
	"MAX_KEY_LEN":         MaxKeyLen,
	"MAX_WEIGHT":          MaxWeight,
	"MAX_RETRIES":         MaxRetries,
	"MAX_GENERATION":      MaxGeneration,
	"MAX_COOKIE_AGE":      MaxCookieAge,
	"MAX_HASH_KEY_LEN":    MaxHashKeyLen,
	"MAX_COOKIE_NAME_LEN": MaxCookieNameLen,
	"MAX_COOKIE_PATH_LEN": MaxCookiePathLen,
	"MAX_ZONE_LEN":        MaxZoneLen,
	"MAX_FAILS":           model.MaxPeerFails,
	"MAX_FAIL_TIMEOUT_MS": model.MaxPeerFailTimeout.Milliseconds(),
	"MAX_CONNS":           model.MaxPeerConns,

	"MAX_HOSTS":          MaxHosts,
	"MAX_HOST_NAME_LEN":  MaxHostNameLen,
	"MAX_HOST_HOP_LEN":   MaxHostHopLen,
	"MAX_HOST_CERT_LEN":  MaxHostCertLen,
	"MAX_HOST_VALUE_LEN": MaxHostValueLen,

	"MAX_SPLIT_RULES":         model.MaxSplitRules,
	"MAX_SPLIT_CONDITIONS":    model.MaxSplitConditions,
	"MAX_SPLIT_TARGETS":       model.MaxSplitTargets,
	"MAX_SPLIT_WEIGHT":        model.MaxSplitWeight,
	"MAX_SPLIT_ANSWERS":       model.MaxSplitAnswers,
	"MAX_CONDITION_NAME_LEN":  model.MaxConditionNameLen,
	"MAX_CONDITION_REGEX_LEN": model.MaxConditionRegexLen,
	"MAX_MATCH_VALUE_LEN":     model.MaxMatchValueLen,
	"MAX_HEADER_EDITS":        model.MaxHeaderEdits,
	"MAX_HEADER_NAME_LEN":     model.MaxHeaderNameLen,
	"MAX_HEADER_VALUE_LEN":    model.MaxHeaderValueLen,
	"MAX_SPLIT_HEADER_NAMES":  model.MaxSplitHeaderNames,
}

// LimitError is a payload that is well formed but larger than a limit
// allows; the controller reports it with its own reason.
type LimitError struct {
	// What is counted: "endpoints" or "backends".
	What       string
	Got, Limit int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%d %s, more than the limit of %d", e.Got, e.What, e.Limit)
}
