package expr

import (
	"errors"
	"fmt"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// pyTime is a datetime.datetime or, with date set, a datetime.date. A naive datetime holds its wall clock
// in UTC; an aware one its offset.
type pyTime struct {
	t     time.Time
	aware bool
	date  bool
}

var (
	_ starlark.HasAttrs   = (*pyTime)(nil)
	_ starlark.HasBinary  = (*pyTime)(nil)
	_ starlark.Comparable = (*pyTime)(nil)
)

func (d *pyTime) Type() string {
	if d.date {
		return "date"
	}
	return "datetime"
}
func (d *pyTime) Freeze()              {}
func (d *pyTime) Truth() starlark.Bool { return true }
func (d *pyTime) Hash() (uint32, error) {
	return starlark.MakeInt64(d.t.UnixMicro()).Hash()
}

// String is str(): 2024-01-02 03:04:05[.ffffff][+00:00], or 2024-01-02 for a date.
func (d *pyTime) String() string { return d.isoformat(" ", "auto") }

// pyRepr is repr(): datetime.datetime(2024, 1, 2, 3, 4, 5).
func (d *pyTime) pyRepr() string {
	t := d.t
	if d.date {
		return fmt.Sprintf("datetime.date(%d, %d, %d)", t.Year(), t.Month(), t.Day())
	}
	s := fmt.Sprintf("datetime.datetime(%d, %d, %d, %d, %d", t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute())
	if us := t.Nanosecond() / 1000; t.Second() != 0 || us != 0 {
		s += fmt.Sprintf(", %d", t.Second())
		if us != 0 {
			s += fmt.Sprintf(", %d", us)
		}
	}
	if d.aware {
		s += ", tzinfo=" + tzOf(t).pyRepr()
	}
	return s + ")"
}

func (d *pyTime) isoformat(sep, timespec string) string {
	if d.date {
		return d.t.Format("2006-01-02")
	}
	layout := "2006-01-02" + sep + "15:04:05"
	switch {
	case timespec == "microseconds" || timespec == "auto" && d.t.Nanosecond()/1000 != 0:
		layout += ".000000"
	case timespec == "milliseconds":
		layout += ".000"
	case timespec == "minutes":
		layout = "2006-01-02" + sep + "15:04"
	case timespec == "hours":
		layout = "2006-01-02" + sep + "15"
	}
	if d.aware {
		layout += "-07:00"
	}
	return d.t.Format(layout)
}

func (d *pyTime) AttrNames() []string {
	return []string{"astimezone", "date", "day", "hour", "isoformat", "isoweekday", "microsecond", "minute", "month",
		"replace", "second", "strftime", "timestamp", "tzinfo", "weekday", "year"}
}

func (d *pyTime) Attr(name string) (starlark.Value, error) {
	t := d.t
	fields := map[string]int{"year": t.Year(), "month": int(t.Month()), "day": t.Day()}
	if !d.date {
		fields["hour"], fields["minute"], fields["second"], fields["microsecond"] = t.Hour(), t.Minute(), t.Second(), t.Nanosecond()/1000
	}
	if v, ok := fields[name]; ok {
		return starlark.MakeInt(v), nil
	}
	if name == "tzinfo" && !d.date {
		if !d.aware {
			return starlark.None, nil
		}
		return tzOf(t), nil
	}
	if m := d.method(name); m != nil {
		return fn(name, m), nil
	}
	return nil, fmt.Errorf("%s has no attribute %q", d.Type(), name)
}

// CompareSameType orders two datetimes; a naive one and an aware one are unequal and cannot be ordered,
// as in Python.
func (d *pyTime) CompareSameType(op syntax.Token, y starlark.Value, _ int) (bool, error) {
	o := y.(*pyTime)
	if d.date != o.date || d.aware != o.aware {
		switch op {
		case syntax.EQL:
			return false, nil
		case syntax.NEQ:
			return true, nil
		}
		return false, errors.New("can't compare offset-naive and offset-aware datetimes")
	}
	return threeway(op, d.t.Compare(o.t)), nil
}

func threeway(op syntax.Token, c int) bool {
	switch op {
	case syntax.EQL:
		return c == 0
	case syntax.NEQ:
		return c != 0
	case syntax.LT:
		return c < 0
	case syntax.LE:
		return c <= 0
	case syntax.GT:
		return c > 0
	}
	return c >= 0
}

// Binary is datetime ± timedelta and datetime - datetime.
func (d *pyTime) Binary(op syntax.Token, y starlark.Value, side starlark.Side) (starlark.Value, error) {
	switch o := y.(type) {
	case *pyDelta:
		switch {
		case op == syntax.PLUS:
			return d.add(o.us), nil
		case op == syntax.MINUS && side == starlark.Left:
			return d.add(-o.us), nil
		}
	case *pyTime:
		if op == syntax.MINUS && o.date == d.date {
			if o.aware != d.aware {
				return nil, errors.New("can't subtract offset-naive and offset-aware datetimes")
			}
			diff := d.t.Sub(o.t).Microseconds()
			if side == starlark.Right {
				diff = -diff
			}
			return &pyDelta{us: diff}, nil
		}
	}
	return nil, nil
}

func (d *pyTime) add(us int64) *pyTime {
	if d.date {
		// A date moves by the timedelta's days, which Python floors.
		const day = 86_400 * 1_000_000
		days := us / day
		if us%day < 0 {
			days--
		}
		us = days * day
	}
	return &pyTime{t: d.t.Add(time.Duration(us) * time.Microsecond), aware: d.aware, date: d.date}
}
