package snippet

import (
	"errors"
	"fmt"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// maxMapEntries bounds one map's entries (the tokenizer bounds the
// snippet's words too).
const maxMapEntries = 500

// mapBlock reads "map SOURCE $VARIABLE { ... }" of an http snippet, whose
// name is toks[i] and whose "{" is toks[open]; it returns the index of
// the closing "}". The source is a value of variables a snippet may read;
// the variable is a new one (VariableName); the entries are "default
// VALUE;", "KEY VALUE;" with a literal key (no "$", not starting with
// "~" or "\", and none of map's own words), or "~REGEX VALUE;" and
// "~*REGEX VALUE;" with a regex of block-user-agents' grammar. hostnames,
// include and volatile are refused.
func (p *parser) mapBlock(toks []Token, i, open int) (int, error) {
	args := toks[i+1 : open]
	if len(args) != 2 {
		return 0, fmt.Errorf("want map SOURCE $variable { ... }, not %d arguments", len(args))
	}
	src, err := p.sc.parseTemplate(args[0].Text)
	if err != nil {
		return 0, fmt.Errorf("source: %w", err)
	}
	if !hasVariable(src) {
		return 0, errors.New("the source holds no variable: every request would get one value")
	}
	name, ok := strings.CutPrefix(args[1].Text, "$")
	if !ok || args[1].Quoted {
		return 0, fmt.Errorf("second argument %q: want $name", model.Truncate(args[1].Text))
	}
	if err := VariableName(name); err != nil {
		return 0, err
	}
	if p.sc.set[name] {
		return 0, fmt.Errorf("variable $%s is defined twice", name)
	}
	m := model.SnippetMap{Source: src, Variable: name}
	seen := map[string]bool{}
	j := open + 1
	for {
		if j >= len(toks) {
			return 0, errors.New("the map block is not closed")
		}
		if toks[j].Kind == CloseBrace {
			break
		}
		k := j
		for k < len(toks) && toks[k].Kind == Word {
			k++
		}
		if k == len(toks) || toks[k].Kind != Semicolon {
			return 0, fmt.Errorf("line %d: a map entry is KEY VALUE;", toks[j].Line)
		}
		if err := p.mapEntry(&m, toks[j:k], seen); err != nil {
			return 0, fmt.Errorf("line %d: %w", toks[j].Line, err)
		}
		if len(m.Entries) > maxMapEntries {
			return 0, fmt.Errorf("more than %d entries", maxMapEntries)
		}
		j = k + 1
	}
	p.sc.set[name] = true
	p.out.Maps = append(p.out.Maps, m)
	return j, nil
}

// mapWords are map's own parameters, which a literal key may not be.
var mapWords = map[string]bool{"default": true, "hostnames": true, "include": true, "volatile": true}

func (p *parser) mapEntry(m *model.SnippetMap, words []Token, seen map[string]bool) error {
	if len(words) == 1 && mapWords[words[0].Text] && !words[0].Quoted {
		return fmt.Errorf("%q is not supported in a map", words[0].Text)
	}
	if len(words) != 2 {
		return fmt.Errorf("want KEY VALUE, not %d words", len(words))
	}
	key := words[0].Text
	if seen[key] {
		return fmt.Errorf("key %q is listed twice", model.Truncate(key))
	}
	seen[key] = true
	v, err := p.value(words[1])
	if err != nil {
		return fmt.Errorf("value: %w", err)
	}
	e := model.MapEntry{Value: v}
	switch {
	case key == "default":
		m.Default, m.HasDefault = v, true
		return nil
	case mapWords[key]:
		return fmt.Errorf("%q is not supported in a map", key)
	case strings.HasPrefix(key, "~*"), strings.HasPrefix(key, "~"):
		e.Op = "~"
		if strings.HasPrefix(key, "~*") {
			e.Op = "~*"
		}
		if e.Key, err = model.ParseHeaderRegex(key[len(e.Op):]); err != nil {
			return fmt.Errorf("key %q: %w", model.Truncate(key), err)
		}
	case strings.HasPrefix(key, `\`):
		return fmt.Errorf("key %q: a key may not start with \\", model.Truncate(key))
	default:
		if _, err := model.ParseHeaderValue(key); err != nil || strings.Contains(key, "$") {
			return fmt.Errorf("key %q: want printable text without $", model.Truncate(key))
		}
		e.Key = key
	}
	m.Entries = append(m.Entries, e)
	return nil
}

func hasVariable(t model.Template) bool {
	for _, p := range t {
		if p.Variable != "" {
			return true
		}
	}
	return false
}
