package expr

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

const usPerDay = 86_400 * 1_000_000

// pyDelta is a datetime.timedelta, in microseconds.
type pyDelta struct{ us int64 }

var (
	_ starlark.HasAttrs   = (*pyDelta)(nil)
	_ starlark.HasBinary  = (*pyDelta)(nil)
	_ starlark.HasUnary   = (*pyDelta)(nil)
	_ starlark.Comparable = (*pyDelta)(nil)
)

func (d *pyDelta) Type() string          { return "timedelta" }
func (d *pyDelta) Freeze()               {}
func (d *pyDelta) Truth() starlark.Bool  { return d.us != 0 }
func (d *pyDelta) Hash() (uint32, error) { return starlark.MakeInt64(d.us).Hash() }

// parts are Python's normalised days, seconds and microseconds (days may be negative, the rest not).
func (d *pyDelta) parts() (days, secs, us int64) {
	days = d.us / usPerDay
	rest := d.us % usPerDay
	if rest < 0 {
		days--
		rest += usPerDay
	}
	return days, rest / 1_000_000, rest % 1_000_000
}

// String is str(): "1 day, 2:03:04", "-1 day, 23:59:59.500000".
func (d *pyDelta) String() string {
	days, secs, us := d.parts()
	s := fmt.Sprintf("%d:%02d:%02d", secs/3600, secs/60%60, secs%60)
	if us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	if days != 0 {
		plural := "s"
		if days == 1 || days == -1 {
			plural = ""
		}
		s = fmt.Sprintf("%d day%s, %s", days, plural, s)
	}
	return s
}

func (d *pyDelta) pyRepr() string {
	days, secs, us := d.parts()
	var args []string
	for _, f := range []struct {
		name string
		v    int64
	}{{"days", days}, {"seconds", secs}, {"microseconds", us}} {
		if f.v != 0 {
			args = append(args, fmt.Sprintf("%s=%d", f.name, f.v))
		}
	}
	if len(args) == 0 {
		return "datetime.timedelta(0)"
	}
	return "datetime.timedelta(" + strings.Join(args, ", ") + ")"
}

func (d *pyDelta) AttrNames() []string {
	return []string{"days", "microseconds", "seconds", "total_seconds"}
}

func (d *pyDelta) Attr(name string) (starlark.Value, error) {
	days, secs, us := d.parts()
	switch name {
	case "days":
		return starlark.MakeInt64(days), nil
	case "seconds":
		return starlark.MakeInt64(secs), nil
	case "microseconds":
		return starlark.MakeInt64(us), nil
	case "total_seconds":
		return fn(name, func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
			return starlark.Float(float64(d.us) / 1e6), nil
		}), nil
	}
	return nil, fmt.Errorf("timedelta has no attribute %q", name)
}

func (d *pyDelta) CompareSameType(op syntax.Token, y starlark.Value, _ int) (bool, error) {
	o := y.(*pyDelta).us
	c := 0
	if d.us < o {
		c = -1
	} else if d.us > o {
		c = 1
	}
	return threeway(op, c), nil
}

func (d *pyDelta) Unary(op syntax.Token) (starlark.Value, error) {
	switch op {
	case syntax.MINUS:
		return &pyDelta{us: -d.us}, nil
	case syntax.PLUS:
		return d, nil
	}
	return nil, nil
}

// Binary is timedelta ± timedelta, timedelta * number, timedelta / number or timedelta, and
// timedelta // int or timedelta.
func (d *pyDelta) Binary(op syntax.Token, y starlark.Value, side starlark.Side) (starlark.Value, error) {
	if o, ok := y.(*pyDelta); ok {
		a, b := d.us, o.us
		if side == starlark.Right {
			a, b = b, a
		}
		switch op {
		case syntax.PLUS:
			return &pyDelta{us: a + b}, nil
		case syntax.MINUS:
			return &pyDelta{us: a - b}, nil
		case syntax.SLASH, syntax.SLASHSLASH:
			if b == 0 {
				return nil, errors.New("division of a timedelta by a zero timedelta")
			}
			if op == syntax.SLASH {
				return starlark.Float(float64(a) / float64(b)), nil
			}
			return starlark.MakeInt64(int64(math.Floor(float64(a) / float64(b)))), nil
		}
		return nil, nil
	}
	f, ok := starlark.AsFloat(y)
	if !ok || !isNumber(y) {
		return nil, nil
	}
	switch {
	case op == syntax.STAR:
		return &pyDelta{us: int64(math.RoundToEven(float64(d.us) * f))}, nil
	case (op == syntax.SLASH || op == syntax.SLASHSLASH) && side == starlark.Left:
		if f == 0 {
			return nil, errors.New("division of a timedelta by zero")
		}
		q := float64(d.us) / f
		if op == syntax.SLASHSLASH {
			return &pyDelta{us: int64(math.Floor(q))}, nil
		}
		return &pyDelta{us: int64(math.RoundToEven(q))}, nil
	}
	return nil, nil
}
