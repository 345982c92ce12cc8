package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// A rule's sessionPersistence (GEP-1619) is the Lua balancer's sticky
// cookie on backends of the rule's own: each backendRef of a persistent
// rule is a model backend keyed by its Service port and a digest of the
// cookie (Backend.Key), balanced with model.Sticky, so that another rule
// or an Ingress on the same Service port keeps its own balancing. The
// cookie names a peer, and the rule's split keeps a client on the
// backendRef whose peer its cookie names (model.SplitRule.Affinity),
// whatever the weights.

// sessionPrefix starts the default cookie name of a rule without
// sessionName: it is followed by a digest of the route and the rule, so
// that two rules never share a session by default (GEP-1619).
const sessionPrefix = "causeway-session-"

// sessionSuffix marks the backend key of a persistent rule's backend,
// followed by a digest of its cookie.
const sessionSuffix = "@session-"

// sessionKey is the suffix of a Service port's key for a backend with
// the sticky cookie c.
func sessionKey(c *model.StickyCookie) string {
	sum := sha256.Sum256([]byte(c.Name + "\x00" + c.Path + "\x00" + strconv.Itoa(c.MaxAge) + "\x00" + c.SameSite))
	return sessionSuffix + hex.EncodeToString(sum[:6])
}

// sessionCookie translates spec.rules[i].sessionPersistence of the route
// ref into the sticky cookie of the rule's backends. rule is the rule's
// name, or its index when it has none; matches are its matches (the
// cookie's Path).
//
//   - Type Cookie only: the balancer has no header stickiness, and
//     consistent hashing on a header would send every client without it
//     to one endpoint and never give the client a session to send back.
//   - sessionName: the cookie name, 1 to 64 letters, digits, "_", "."
//     and "-"; by default sessionPrefix and a digest of the route and
//     the rule.
//   - lifetimeType Session (the default): a cookie without Max-Age. An
//     absoluteTimeout is refused there: the cookie holds no time, so the
//     balancer cannot end the session.
//   - lifetimeType Permanent: Max-Age is absoluteTimeout in whole
//     seconds (1 s to ten years).
//   - Path: the longest path all of the rule's matches share (GEP-1619:
//     the route's path; a regex's literal prefix), "/" when none; HttpOnly
//     and SameSite=Lax (not Strict: a client arriving from another
//     site would lose its session on the first request).
func sessionCookie(field string, ref model.ObjectRef, rule string, matches []Match, in *gwv1.SessionPersistence) (*model.StickyCookie, *ruleError) {
	if in.Type != nil && *in.Type != gwv1.CookieBasedSessionPersistence {
		if *in.Type == gwv1.HeaderBasedSessionPersistence {
			return nil, ruleUnsupported("%s.type Header: not supported by Causeway (its balancer keeps sessions by cookie only)", field)
		}
		return nil, ruleUnsupported("%s.type %q: want Cookie", field, model.Truncate(string(*in.Type)))
	}
	c := &model.StickyCookie{Path: cookiePath(matches), SameSite: "Lax"}
	if in.SessionName != nil {
		c.Name = *in.SessionName
		if c.Name == "" {
			return nil, ruleUnsupported("%s.sessionName: want a cookie name, not an empty one", field)
		}
	} else {
		sum := sha256.Sum256([]byte(ref.Kind + "/" + ref.Namespace + "/" + ref.Name + "/" + rule))
		c.Name = sessionPrefix + hex.EncodeToString(sum[:5])
	}
	permanent := false
	if in.CookieConfig != nil && in.CookieConfig.LifetimeType != nil {
		switch *in.CookieConfig.LifetimeType {
		case gwv1.SessionCookieLifetimeType:
		case gwv1.PermanentCookieLifetimeType:
			permanent = true
		default:
			return nil, ruleUnsupported("%s.cookieConfig.lifetimeType %q: want Session or Permanent", field, model.Truncate(string(*in.CookieConfig.LifetimeType)))
		}
	}
	switch {
	case permanent && in.AbsoluteTimeout == nil:
		return nil, ruleUnsupported("%s: a Permanent cookie needs an absoluteTimeout", field)
	case permanent:
		age, err := cookieMaxAge(string(*in.AbsoluteTimeout))
		if err != nil {
			return nil, ruleUnsupported("%s.absoluteTimeout: %v", field, err)
		}
		c.MaxAge = age
	case in.AbsoluteTimeout != nil:
		return nil, ruleUnsupported("%s.absoluteTimeout: not supported by Causeway with a Session cookie "+
			"(the cookie holds no time, so the session cannot be ended); use cookieConfig.lifetimeType Permanent, whose Max-Age it sets", field)
	}
	if err := c.Validate(); err != nil {
		return nil, ruleUnsupported("%s.sessionName: %v", field, err)
	}
	return c, nil
}

// cookieMaxAge reads a Gateway API Duration as a Max-Age: whole seconds,
// at least one, at most model.MaxCookieAge.
func cookieMaxAge(s string) (int, error) {
	d, err := readGatewayDuration(s)
	switch {
	case err != nil:
		return 0, err
	case d < time.Second:
		return 0, fmt.Errorf("%s is shorter than 1s", s)
	case d > time.Duration(model.MaxCookieAge)*time.Second:
		return 0, fmt.Errorf("%s is longer than %d seconds", s, model.MaxCookieAge)
	}
	return int(d / time.Second), nil
}

// cookiePath is the longest path, element-wise, that every match's path
// starts with: an Exact or Prefix path, or a regex's literal prefix up to
// its last "/". "/" when they share none, or when it is outside the
// cookie path grammar.
func cookiePath(matches []Match) string {
	var common []string
	for i, m := range matches {
		p := m.Path.Path
		if m.Path.Type == model.Regex {
			p = strings.TrimPrefix(p, "^")
			if j := strings.IndexAny(p, `\.^$*+?()[]{}|`); j >= 0 {
				p = p[:j]
			}
			p = p[:strings.LastIndex(p, "/")+1]
		}
		segs := strings.Split(strings.Trim(p, "/"), "/")
		if i == 0 {
			common = segs
			continue
		}
		n := 0
		for n < len(common) && n < len(segs) && common[n] == segs[n] {
			n++
		}
		common = common[:n]
	}
	p := "/" + strings.Join(common, "/")
	if (&model.StickyCookie{Path: p}).Validate() != nil {
		return "/"
	}
	return p
}
