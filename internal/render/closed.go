package render

import (
	"fmt"

	"github.com/causeway/causeway/internal/model"
)

// closedLocationView is a deny-only location block of a refused server
// snippet (model.ClosedLocation): its modifier and quoted path or regex.
type closedLocationView struct {
	Modifier, Path string
}

// planClosed prints srv's closed locations ahead of its own, each
// re-checked against the model's grammar. A closed location that nginx
// would read as a duplicate of one of the server's (the same prefix or
// exact path) closes that one instead.
func planClosed(v *serverView, srv *model.Server) error {
	for _, c := range srv.Closed {
		cv := closedLocationView{Modifier: c.Modifier}
		var err error
		switch c.Modifier {
		case "", "^~", "=":
			if err = model.ValidatePath(c.Path); err == nil && pathOnly.MatchString(c.Path) {
				cv.Path, err = Quote(c.Path)
			} else if err == nil {
				err = fmt.Errorf("path %q", c.Path)
			}
		case "~", "~*":
			if err = model.ValidateClosedRegex(c.Path); err == nil {
				var re string
				if re, err = regexLocation(c.Path); err == nil {
					cv.Path, err = Quote(re)
				}
			}
		default:
			err = fmt.Errorf("modifier %q", c.Modifier)
		}
		if err != nil {
			return fmt.Errorf("closed location of %s: %w", c.Source, err)
		}
		if i := sameLocation(v.Locations, cv); i >= 0 {
			l := v.Locations[i]
			v.Locations[i] = locationView{Modifier: l.Modifier, Path: l.Path, Return: 503}
			continue
		}
		v.Closed = append(v.Closed, cv)
	}
	return nil
}

// sameLocation is the index of the location nginx would read as the same
// as c (prefix and ^~ alike), or -1.
func sameLocation(ls []locationView, c closedLocationView) int {
	prefix := func(m string) bool { return m == "" || m == "^~" }
	for i, l := range ls {
		if l.Path == c.Path && (l.Modifier == c.Modifier || prefix(l.Modifier) && prefix(c.Modifier)) {
			return i
		}
	}
	return -1
}
