package snippet

import (
	"strconv"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// DenyingLocations reads, from a server snippet that Parse refused, the
// location blocks that only refuse requests: a body of allow, deny and
// return (of 400 or more) lines, with a deny all or such a return. It
// returns them when every statement of src that looks meant to keep
// requests out (Denies) is inside one; the refused snippet then closes
// only the requests those locations match, rather than every path. ok is
// false when there is none, when a denying statement stands elsewhere, or
// when a location's match cannot be typed (then everything closes, as
// before).
func DenyingLocations(src string) (locs []model.ClosedLocation, ok bool) {
	toks, err := Tokenize(src)
	if err != nil {
		return nil, false
	}
	for i := 0; i < len(toks); {
		t := toks[i]
		if t.Kind != Word {
			return nil, false
		}
		j := i + 1
		for j < len(toks) && toks[j].Kind == Word {
			j++
		}
		if j == len(toks) {
			return nil, false
		}
		switch {
		case toks[j].Kind == OpenBrace && t.Text == "location" && !t.Quoted:
			loc, end, ok := denyingLocation(toks[i+1:j], toks, j)
			if !ok {
				return nil, false
			}
			locs = append(locs, loc)
			i = end + 1
		case toks[j].Kind == Semicolon:
			if denyingStatement(toks[i:j]) {
				return nil, false
			}
			i = j + 1
		default:
			return nil, false // another block, or a stray "}"
		}
	}
	return locs, len(locs) > 0
}

// denyingLocation reads "location [MODIFIER] PATH { BODY }" whose "{" is
// toks[open]; it returns the index of its "}".
func denyingLocation(args, toks []Token, open int) (model.ClosedLocation, int, bool) {
	var loc model.ClosedLocation
	switch len(args) {
	case 1:
		loc.Path = args[0].Text
	case 2:
		loc.Modifier, loc.Path = args[0].Text, args[1].Text
	default:
		return loc, 0, false
	}
	switch loc.Modifier {
	case "", "^~", "=":
		if model.ValidatePath(loc.Path) != nil {
			return loc, 0, false
		}
	case "~", "~*":
		if model.ValidateClosedRegex(loc.Path) != nil {
			return loc, 0, false
		}
	default:
		return loc, 0, false
	}
	refuses := false
	i := open + 1
	for i < len(toks) && toks[i].Kind != CloseBrace {
		j := i
		for j < len(toks) && toks[j].Kind == Word {
			j++
		}
		if j == len(toks) || toks[j].Kind != Semicolon || j == i {
			return loc, 0, false
		}
		words := toks[i:j]
		switch name := words[0].Text; {
		case name == "deny" && len(words) == 2 && words[1].Text == "all":
			refuses = true
		case (name == "deny" || name == "allow") && len(words) == 2:
		case name == "return" && len(words) >= 2 && len(words) <= 3 && refusal(words[1].Text):
			refuses = true
		default:
			return loc, 0, false
		}
		i = j + 1
	}
	if i == len(toks) || !refuses {
		return loc, 0, false
	}
	return loc, i, true
}

// denyingStatement reports whether a top-level statement looks meant to
// keep requests out, as Denies judges it.
func denyingStatement(words []Token) bool {
	parts := make([]string, len(words))
	for i, w := range words {
		parts[i] = w.Text
	}
	return Denies(strings.Join(parts, " "))
}

// refusal reports whether a return's status is 400 or more.
func refusal(s string) bool {
	code, err := strconv.Atoi(s)
	return err == nil && code >= 400 && code <= 599
}
