package ingest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file parses the map and list cells that exports embed in CSV: JSON
// (`{"team":"ml"}`), JSON without the outer braces (Azure EA tags:
// `"env": "prod","team": "ml"`), Python reprs written by pandas-based tools
// (`[{'key': 'team', 'value': 'ml', 'x': None}]`) and Hive/Athena maps
// (`{team=ml, env=prod}`).

// number is a numeric literal kept as text so money stays exact.
type number string

var errLoose = errors.New("not a JSON or Python literal")

// errLooseNUL refuses a \u0000 escape: the cell itself is clean text (the
// Reader saw to that), but the NUL it decodes to could be stored in neither
// text nor jsonb.
var errLooseNUL = fmt.Errorf("%w: a \\u0000 escape decodes to a NUL character", errLoose)

const maxLooseDepth = 32

type looseParser struct {
	s     string
	i     int
	depth int
}

// parseLoose parses one JSON / Python literal: objects become
// map[string]any, arrays []any, strings string, numbers number, booleans
// bool, null/None nil.
func parseLoose(s string) (any, error) {
	p := &looseParser{s: s}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.s) {
		return nil, errLoose
	}
	return v, nil
}

func (p *looseParser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *looseParser) value() (any, error) {
	p.space()
	if p.i >= len(p.s) {
		return nil, errLoose
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object()
	case c == '[' || c == '(':
		return p.array()
	case c == '"' || c == '\'':
		return p.str()
	case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
		start := p.i
		for p.i < len(p.s) && strings.IndexByte("+-.eE0123456789", p.s[p.i]) >= 0 {
			p.i++
		}
		return number(p.s[start:p.i]), nil
	default:
		start := p.i
		for p.i < len(p.s) && (isWordByte(p.s[p.i])) {
			p.i++
		}
		switch p.s[start:p.i] {
		case "true", "True":
			return true, nil
		case "false", "False":
			return false, nil
		case "null", "None", "NULL":
			return nil, nil
		}
		return nil, errLoose
	}
}

func isWordByte(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func (p *looseParser) enter() error {
	p.depth++
	if p.depth > maxLooseDepth {
		return errLoose
	}
	return nil
}

func (p *looseParser) object() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.i++ // {
	m := map[string]any{}
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return m, nil
		}
		k, err := p.value()
		if err != nil {
			return nil, err
		}
		ks, ok := k.(string)
		if !ok {
			if n, isNum := k.(number); isNum {
				ks = string(n)
			} else {
				return nil, errLoose
			}
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, errLoose
		}
		p.i++
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		m[ks] = v
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return m, nil
		}
		return nil, errLoose
	}
}

func (p *looseParser) array() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	closer := byte(']')
	if p.s[p.i] == '(' {
		closer = ')'
	}
	p.i++
	var out []any
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == closer {
			p.i++
			return out, nil
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == closer {
			p.i++
			return out, nil
		}
		return nil, errLoose
	}
}

func (p *looseParser) str() (any, error) {
	q := p.s[p.i]
	p.i++
	start := p.i
	// Fast path: no escapes.
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == q {
			s := p.s[start:p.i]
			p.i++
			return s, nil
		}
		if c == '\\' {
			break
		}
		p.i++
	}
	var b strings.Builder
	b.WriteString(p.s[start:p.i])
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			return b.String(), nil
		case c == '\\' && p.i+1 < len(p.s):
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'b', 'f':
			case 'u':
				if p.i+4 <= len(p.s) {
					if r, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32); err == nil {
						if r == 0 {
							return nil, errLooseNUL
						}
						b.WriteRune(rune(r))
						p.i += 4
						continue
					}
				}
				b.WriteRune(utf8.RuneError)
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return nil, errLoose
}

// looseString renders a scalar tag value as text.
func looseString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case number:
		return string(x)
	case bool:
		if x {
			return "true"
		}
		return "false"
	case nil:
		return ""
	default:
		return "" // nested values are not tag values
	}
}

// parseTagMap calls fn for each key/value of a serialized map cell. It
// returns errLoose when the cell is none of the supported shapes. An empty
// cell, "{}" or "[]" yields nothing.
func parseTagMap(s string, fn func(k, v string)) error {
	s = strings.TrimSpace(s)
	if s == "" || s == "{}" || s == "[]" || s == "NULL" || s == "null" {
		return nil
	}
	if s[0] != '{' && s[0] != '[' {
		if s[0] == '"' || s[0] == '\'' {
			// Azure EA: JSON object without its braces.
			s = "{" + s + "}"
		} else {
			return parseHiveMap(s, fn)
		}
	}
	v, err := parseLoose(s)
	if err != nil {
		if s[0] == '{' && strings.IndexByte(s, '=') > 0 {
			return parseHiveMap(s, fn)
		}
		return err
	}
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			fn(k, looseString(val))
		}
	case []any:
		// GCP labels: [{key, value}], or LiteLLM tags: ["k:v", "bare"].
		for _, e := range x {
			switch item := e.(type) {
			case map[string]any:
				k, _ := item["key"].(string)
				if k != "" {
					fn(k, looseString(item["value"]))
				}
			case string:
				if k, val, ok := strings.Cut(item, ":"); ok && k != "" {
					fn(k, val)
				} else if item != "" {
					fn(item, "true")
				}
			}
		}
	default:
		return errLoose
	}
	return nil
}

// parseHiveMap parses `{k=v, k2=v2}` (Athena/Hive map text).
func parseHiveMap(s string, fn func(k, v string)) error {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "{")
	s = strings.TrimSuffix(s, "}")
	if strings.IndexByte(s, '=') < 0 {
		return errLoose
	}
	for part := range strings.SplitSeq(s, ", ") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return errLoose
		}
		if k = strings.TrimSpace(k); k != "" {
			fn(k, strings.TrimSpace(v))
		}
	}
	return nil
}

// looseErr reports a map or list cell that parseTagMap or parseLoose refused
// (err may be nil when the value parsed but had the wrong shape); want says
// what shape was expected.
func (c *rowCtx) looseErr(i int, err error, want string) *ParseError {
	if errors.Is(err, errLooseNUL) {
		return c.errAt(i, ErrNULByte, `it is written as the escape \u0000, and text cannot hold NUL characters`)
	}
	return c.errAt(i, ErrSyntax, want)
}
