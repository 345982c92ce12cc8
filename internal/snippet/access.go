package snippet

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/causeway/causeway/internal/model"
)

// accessRule is one allow or deny directive, in the order written.
type accessRule struct {
	allow bool
	// all is "all"; else prefix is the address or CIDR.
	all    bool
	prefix netip.Prefix
	line   int
}

func (r accessRule) String() string {
	verb := "deny"
	if r.allow {
		verb = "allow"
	}
	if r.all {
		return verb + " all"
	}
	return verb + " " + r.prefix.String()
}

func parseAllow(p *parser, args []Token) error { return p.accessRule(true, args) }
func parseDeny(p *parser, args []Token) error  { return p.accessRule(false, args) }

// accessRule reads allow or deny's one argument: all, an address or a
// CIDR without host bits (model.ParseCIDR); unix: and names are refused.
func (p *parser) accessRule(allow bool, args []Token) error {
	if err := wantArgs(args, 1, 1); err != nil {
		return err
	}
	r := accessRule{allow: allow, line: args[0].Line}
	if args[0].Text == "all" {
		r.all = true
	} else {
		pre, err := model.ParseCIDR(args[0].Text)
		if err != nil {
			return err
		}
		r.prefix = pre
	}
	p.rules = append(p.rules, r)
	return nil
}

// everyone are the prefixes of every address.
var everyone = []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")}

// accessList turns allow and deny rules into the model's list, which
// refuses the Deny prefixes first and then, when Allow is not empty,
// every address outside it. nginx instead takes the first rule that
// matches, so only orders that mean the same are read: deny lines, then
// allow lines, then "deny all" when there are allow lines (or "allow
// all", which changes nothing). Any other order is refused with what to
// write instead, rather than guessed.
func accessList(rules []accessRule) (*model.AccessList, error) {
	if len(rules) == 0 {
		return nil, nil
	}
	out := &model.AccessList{}
	i := 0
	for ; i < len(rules) && !rules[i].allow && !rules[i].all; i++ {
		out.Deny = append(out.Deny, rules[i].prefix)
	}
	for ; i < len(rules) && rules[i].allow && !rules[i].all; i++ {
		out.Allow = append(out.Allow, rules[i].prefix)
	}
	rest := rules[i:]
	order := errors.New("write deny lines first, then allow lines, then deny all: nginx takes the first rule that matches, and Causeway reads only that order")
	switch {
	case len(rest) == 0 && len(out.Allow) > 0:
		return nil, fmt.Errorf("line %d: allow lines without a final \"deny all\" let every other client in too; end them with deny all", rules[len(rules)-1].line)
	case len(rest) == 0:
	case !rest[0].all:
		return nil, fmt.Errorf("line %d: %q after an allow line: %w", rest[0].line, rest[0], order)
	case len(rest) > 1:
		return nil, fmt.Errorf("line %d: %q after %q can never match: %w", rest[1].line, rest[1], rest[0], order)
	case !rest[0].allow && len(out.Allow) == 0:
		out.Deny = append(out.Deny, everyone...) // deny all: nobody
	case rest[0].allow:
		out.Allow = nil // allow all: the allow lines change nothing
	}
	if len(out.Deny)+len(out.Allow) == 0 {
		return nil, nil
	}
	return out, nil
}
