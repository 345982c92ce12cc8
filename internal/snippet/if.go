package snippet

import (
	"errors"
	"fmt"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// ifBody are the directives an if block may hold: those nginx's
// documentation calls safe inside if in a location (return, and rewrite
// that ends the rewrite phase by redirecting or by finding a new
// location), and set before them: the block must end with one of the
// first two. Header and proxy directives inside if would make
// nginx build a nested location with its own inheritance; rewrite ...
// break would serve the request from it.
var ifBody = map[string]directive{"return": parseReturn, "rewrite": parseIfRewrite, "set": parseSet}

// ifOps are the comparison operators of an if condition.
var ifOps = map[string]bool{"=": true, "!=": true, "~": true, "~*": true, "!~": true, "!~*": true}

// ifBlock reads "if (CONDITION) { ... }" whose name is toks[i] and whose
// "{" is toks[open]; it returns the index of the closing "}".
func (p *parser) ifBlock(toks []Token, i, open int) (int, error) {
	cond, err := p.condition(toks[i+1 : open])
	if err != nil {
		return 0, err
	}
	saved := p.out.Steps
	p.out.Steps = nil
	end, err := p.statements(toks, open+1, ifBody, true)
	if err != nil {
		return 0, err
	}
	cond.Then = p.out.Steps
	p.out.Steps = append(saved, model.SnippetStep{If: cond})
	// A block that goes on would serve the request from the nested
	// location nginx makes of it ("if is evil"): it must leave it.
	if n := len(cond.Then); n == 0 || cond.Then[n-1].Set != nil {
		return 0, errors.New("the block must end with return or rewrite")
	}
	return end, nil
}

// condition reads "($var)", "($var OP value)" as nginx splits them: the
// parentheses glued to the first and last words, or standing alone.
func (p *parser) condition(args []Token) (*model.SnippetIf, error) {
	words := append([]Token(nil), args...)
	bad := errors.New(`want ($variable), ($variable = "text"), ($variable != "text") or ($variable ~ "regex") with ~, ~*, !~ or !~*`)
	if len(words) == 0 || words[0].Quoted || !strings.HasPrefix(words[0].Text, "(") {
		return nil, bad
	}
	words[0].Text = words[0].Text[1:]
	last := &words[len(words)-1]
	switch {
	case last.Text == ")" && !last.Quoted:
		words = words[:len(words)-1]
	case !last.Quoted && strings.HasSuffix(last.Text, ")"):
		last.Text = strings.TrimSuffix(last.Text, ")")
	default:
		return nil, bad
	}
	if len(words) > 0 && words[0].Text == "" {
		words = words[1:]
	}
	if len(words) != 1 && len(words) != 3 || words[0].Quoted {
		return nil, bad
	}
	name, ok := strings.CutPrefix(words[0].Text, "$")
	if !ok || !lowerName(name) || name == "" {
		return nil, fmt.Errorf("condition %q: want a variable first", model.Truncate(words[0].Text))
	}
	if err := p.sc.readable(name); err != nil {
		return nil, err
	}
	c := &model.SnippetIf{Variable: name}
	if len(words) == 1 {
		return c, nil
	}
	op, val := words[1], words[2]
	if op.Quoted || !ifOps[op.Text] {
		return nil, fmt.Errorf("operator %q: want =, !=, ~, ~*, !~ or !~*", model.Truncate(op.Text))
	}
	c.Op = op.Text
	if c.Op == "=" || c.Op == "!=" {
		if _, err := model.ParseHeaderValue(val.Text); err != nil {
			return nil, fmt.Errorf("comparison value %q: %w", model.Truncate(val.Text), err)
		}
	} else if _, err := model.ParseHeaderRegex(val.Text); err != nil {
		return nil, fmt.Errorf("comparison regex %q: %w", model.Truncate(val.Text), err)
	}
	c.Value = val.Text
	return c, nil
}

// parseIfRewrite is rewrite inside if: it must leave the block by
// redirecting or with last.
func parseIfRewrite(p *parser, args []Token) error {
	if err := parseRewrite(p, args); err != nil {
		return err
	}
	r := p.out.Steps[len(p.out.Steps)-1].Rewrite
	if r.Flag != model.RewriteLast && !r.Redirects() {
		return errors.New("inside if, want the flag last, redirect or permanent, or a URL")
	}
	return nil
}
