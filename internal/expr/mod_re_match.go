package expr

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.starlark.net/starlark"
)

// reMatch is a match object: group(), groups(), groupdict(), start(), end(), span(), m[i]. Positions count
// characters, as Python's do.
type reMatch struct {
	re  *regexp.Regexp
	s   string
	loc []int
}

var (
	_ starlark.HasAttrs  = (*reMatch)(nil)
	_ starlark.Indexable = (*reMatch)(nil)
)

func (m *reMatch) String() string {
	return fmt.Sprintf("<re.Match object; span=(%d, %d), match=%s>", m.pos(m.loc[0]), m.pos(m.loc[1]), repr(m.group(0)))
}
func (m *reMatch) Type() string               { return "re.Match" }
func (m *reMatch) Freeze()                    {}
func (m *reMatch) Truth() starlark.Bool       { return true }
func (m *reMatch) Hash() (uint32, error)      { return 0, errors.New("unhashable type: re.Match") }
func (m *reMatch) Len() int                   { return m.re.NumSubexp() + 1 }
func (m *reMatch) Index(i int) starlark.Value { return m.groupOr(i, starlark.None) }

func (m *reMatch) pos(byteOff int) int {
	if byteOff < 0 {
		return -1
	}
	return utf8.RuneCountInString(m.s[:byteOff])
}

func (m *reMatch) group(i int) starlark.Value { return m.groupOr(i, starlark.None) }

func (m *reMatch) groupOr(i int, dflt starlark.Value) starlark.Value {
	if m.loc[2*i] < 0 {
		return dflt
	}
	return starlark.String(m.s[m.loc[2*i]:m.loc[2*i+1]])
}

func (m *reMatch) groups(dflt starlark.Value) starlark.Tuple {
	out := make(starlark.Tuple, m.re.NumSubexp())
	for i := range out {
		out[i] = m.groupOr(i+1, dflt)
	}
	return out
}

// groupIndex reads a group by number or name.
func (m *reMatch) groupIndex(v starlark.Value) (int, error) {
	switch g := v.(type) {
	case starlark.Int:
		i, ok := g.Int64()
		if ok && i >= 0 && int(i) <= m.re.NumSubexp() {
			return int(i), nil
		}
	case starlark.String:
		if i := m.re.SubexpIndex(string(g)); i >= 0 {
			return i, nil
		}
	}
	return 0, fmt.Errorf("no such group: %s", v)
}

func (m *reMatch) AttrNames() []string {
	return []string{"end", "group", "groupdict", "groups", "span", "start", "string"}
}

func (m *reMatch) Attr(name string) (starlark.Value, error) {
	switch name {
	case "string":
		return starlark.String(m.s), nil
	case "group":
		return fn("group", m.groupMethod), nil
	case "groups", "groupdict":
		return fn(name, func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var dflt starlark.Value = starlark.None
			if err := starlark.UnpackArgs(name, args, kwargs, "default?", &dflt); err != nil {
				return nil, err
			}
			if name == "groups" {
				return m.groups(dflt), nil
			}
			d := starlark.NewDict(m.re.NumSubexp())
			for i, n := range m.re.SubexpNames() {
				if n != "" {
					_ = d.SetKey(starlark.String(n), m.groupOr(i, dflt))
				}
			}
			return d, nil
		}), nil
	case "start", "end", "span":
		return fn(name, func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var g starlark.Value = starlark.MakeInt(0)
			if err := starlark.UnpackPositionalArgs(name, args, kwargs, 0, &g); err != nil {
				return nil, err
			}
			i, err := m.groupIndex(g)
			if err != nil {
				return nil, err
			}
			start, end := starlark.MakeInt(m.pos(m.loc[2*i])), starlark.MakeInt(m.pos(m.loc[2*i+1]))
			switch name {
			case "start":
				return start, nil
			case "end":
				return end, nil
			}
			return starlark.Tuple{start, end}, nil
		}), nil
	}
	return nil, fmt.Errorf("re.Match.%s is not available in expressions", name)
}

// groupMethod is m.group(), m.group(1), m.group("name"), m.group(1, 2).
func (m *reMatch) groupMethod(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	if len(args) == 0 {
		return m.group(0), nil
	}
	out := make(starlark.Tuple, len(args))
	for i, a := range args {
		g, err := m.groupIndex(a)
		if err != nil {
			return nil, err
		}
		out[i] = m.group(g)
	}
	if len(out) == 1 {
		return out[0], nil
	}
	return out, nil
}

// expand writes a replacement template: \1, \g<1>, \g<name>, and Python's string escapes.
func (m *reMatch) expand(tpl string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(tpl); i++ {
		c := tpl[i]
		if c != '\\' || i+1 == len(tpl) {
			b.WriteByte(c)
			continue
		}
		i++
		switch d := tpl[i]; {
		case d >= '0' && d <= '9':
			j := i + 1
			if j < len(tpl) && tpl[j] >= '0' && tpl[j] <= '9' {
				j++
			}
			n, _ := strconv.Atoi(tpl[i:j])
			if n > m.re.NumSubexp() {
				return "", fmt.Errorf("invalid group reference %d in the replacement", n)
			}
			b.WriteString(string(m.groupOr(n, starlark.String("")).(starlark.String)))
			i = j - 1
		case d == 'g' && i+1 < len(tpl) && tpl[i+1] == '<':
			end := strings.IndexByte(tpl[i:], '>')
			if end < 0 {
				return "", errors.New("missing > in a \\g<...> group reference")
			}
			name := tpl[i+2 : i+end]
			var g starlark.Value = starlark.String(name)
			if n, err := strconv.Atoi(name); err == nil {
				g = starlark.MakeInt(n)
			}
			idx, err := m.groupIndex(g)
			if err != nil {
				return "", err
			}
			b.WriteString(string(m.groupOr(idx, starlark.String("")).(starlark.String)))
			i += end
		default:
			u, err := unescape(tpl[i-1 : i+1])
			if err != nil {
				return "", err
			}
			b.WriteString(u)
		}
	}
	return b.String(), nil
}
